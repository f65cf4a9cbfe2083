package kafkawire

import (
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/weirnet/weir/broker"
	"github.com/weirnet/weir/broker/recordbatch"
)

// kafkaError maps an error from the Log to the Kafka error a client
// understands, as documented on Log. Errors are matched with errors.Is, so
// the Log may wrap them with context. It returns nil for a nil error.
func kafkaError(err error) *kerr.Error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, broker.ErrUnknownTopic), errors.Is(err, broker.ErrUnknownPartition):
		return kerr.UnknownTopicOrPartition
	case errors.Is(err, broker.ErrOffsetOutOfRange):
		return kerr.OffsetOutOfRange
	case errors.Is(err, broker.ErrCorruptBatch), isBatchError(err):
		return kerr.CorruptMessage
	case errors.Is(err, broker.ErrRecordTooLarge):
		return kerr.MessageTooLarge
	case errors.Is(err, broker.ErrInvalidRecord):
		return kerr.InvalidRecord
	case errors.Is(err, broker.ErrOutOfOrderSequence):
		return kerr.OutOfOrderSequenceNumber
	case errors.Is(err, broker.ErrInvalidProducerEpoch):
		return kerr.InvalidProducerEpoch
	case errors.Is(err, broker.ErrTopicExists):
		return kerr.TopicAlreadyExists
	case errors.Is(err, broker.ErrInvalidTopic):
		return kerr.InvalidTopicException
	case errors.Is(err, broker.ErrInvalidPartitions):
		return kerr.InvalidPartitions
	case errors.Is(err, broker.ErrStorage):
		return kerr.KafkaStorageError
	case errors.Is(err, broker.ErrInvalidConfig):
		return kerr.InvalidConfig
	case errors.Is(err, broker.ErrConfigPolicy), errors.Is(err, broker.ErrPartitionLimit):
		return kerr.PolicyViolation
	}
	return kerr.UnknownServerError
}

// isBatchError reports whether err comes from the recordbatch package; a Log
// that passes its validation errors through unwrapped still yields
// CORRUPT_MESSAGE rather than UNKNOWN_SERVER_ERROR.
func isBatchError(err error) bool {
	for _, target := range [...]error{
		recordbatch.ErrShort, recordbatch.ErrMagic, recordbatch.ErrCRC,
		recordbatch.ErrLength, recordbatch.ErrCorrupt, recordbatch.ErrCompression,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// errorCode is kafkaError's code: 0 for nil.
func errorCode(err error) int16 {
	if err == nil {
		return 0
	}
	return kafkaError(err).Code
}

// errorMessage returns a message for the ErrorMessage field responses have
// from some version on: the error's text when there is one, else nil.
func errorMessage(err error) *string {
	if err == nil {
		return nil
	}
	s := err.Error()
	return &s
}

// protocolError is a request the connection cannot continue after: a bad
// frame, an undecodable header or body, an API key nobody knows. The
// connection is closed and the reason logged as a warning, since it points at
// a broken or hostile client rather than at ordinary disconnects.
type protocolError struct {
	reason string
	// limit: the request may be well formed, but the server's request
	// memory has no room for it (not the client's fault alone).
	limit bool
}

func (e *protocolError) Error() string { return e.reason }

// Malformed reports whether err, a connection's end given to
// Metrics.ConnClosed, is what the client sent not being a Kafka request
// the server can read: random bytes, a TLS client at a plaintext port, a
// frame past the size limits, an undecodable header or body, an unknown
// API key. Not a request that stalled half-sent (a timeout), nor one the
// server's request memory had no room for.
func Malformed(err error) bool {
	var pe *protocolError
	var st stalledError
	return errors.As(err, &pe) && !pe.limit && !errors.As(err, &st)
}

// stalledError is the protocolError of a request that did not arrive whole
// in time: a timeout to the metrics (net.Error), as an idle connection's
// is, and a warning in the log with what stalled, as a protocolError.
type stalledError struct{ *protocolError }

func (e stalledError) Timeout() bool   { return true }
func (e stalledError) Temporary() bool { return false }
func (e stalledError) Unwrap() error   { return e.protocolError }
