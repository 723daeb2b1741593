// Package globaltest holds only a test: that a client given no
// OpenTelemetry provider uses the global ones (see global_test.go).
package globaltest
