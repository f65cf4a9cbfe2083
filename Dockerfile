# weir and weir-sim in one image. Used by docker-compose.yml.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The build context leaves .git out: `docker build --build-arg VERSION=$(git describe
# --tags --always) .` names the version `weir version` prints.
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -ldflags "-X main.version=${VERSION}" -o /out/weir ./cmd/weir && CGO_ENABLED=0 go build -o /out/weir-sim ./cmd/weir-sim

FROM debian:bookworm-slim
# The system's roots, for TLS without a ca_file (a Kafka cluster's tls: {},
# https:// sinks): the slim image has none.
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/weir /out/weir-sim /usr/local/bin/
VOLUME /var/lib/weir
# Without a config, weir listens on loopback, which inside a container no
# published port reaches: the image's own run takes syslog, traps and HTTP
# on every address. The Kafka listener stays on loopback (no credentials
# by default); `docker exec <container> weir consume ...` reaches it.
EXPOSE 5514/udp 5514/tcp 5162/udp 8080/tcp
ENTRYPOINT ["/usr/local/bin/weir"]
CMD ["run", "--data-dir", "/var/lib/weir", "--syslog-listen", "0.0.0.0:5514", "--trap-listen", "0.0.0.0:5162", "--http-listen", "0.0.0.0:8080"]
