package prometheus

// ToPrometheus is toPrometheus, for the external tests.
var ToPrometheus = toPrometheus
