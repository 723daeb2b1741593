package queue

import "github.com/gocurator/curator/framework"

// metrics is a queue's telemetry (stub until wired).
type metrics struct{}

func newMetrics(*framework.Client, string) *metrics { return &metrics{} }
func (m *metrics) put(int)                          {}
func (m *metrics) depth(int)                        {}
func (m *metrics) taken(*framework.Stat)            {}
func (m *metrics) consumed()                        {}
func (m *metrics) close()                           {}
