package gnmi

import "github.com/weirnet/weir/telemetry"

// appendMetric encodes a flattened notification; see Metric.AppendJSON.
func appendMetric(b []byte, m *telemetry.Metric, keys []string) ([]byte, []string, error) {
	return m.AppendJSON(b, keys)
}
