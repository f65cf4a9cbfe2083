# weir and weir-sim in one image. Used by docker-compose.yml.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -o /out/weir ./cmd/weir && CGO_ENABLED=0 go build -o /out/weir-sim ./cmd/weir-sim

FROM debian:bookworm-slim
# The system's roots, for TLS without a ca_file (a Kafka cluster's tls: {},
# https:// sinks): the slim image has none.
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates && rm -rf /var/lib/apt/lists/*
COPY --from=build /out/weir /out/weir-sim /usr/local/bin/
VOLUME /var/lib/weir
ENTRYPOINT ["/usr/local/bin/weir"]
CMD ["run", "--data-dir", "/var/lib/weir"]
