package web

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/shirube/shirube/internal/assistant"
)

// metrics are one server's Prometheus metrics, in a registry of their own
// (never the global one), so that two servers in one process — as in
// tests — count separately.
type metrics struct {
	reg       *prometheus.Registry
	requests  *prometheus.CounterVec
	latency   *prometheus.HistogramVec
	answers   *prometheus.CounterVec
	refusals  *prometheus.CounterVec
	dangerous prometheus.Counter
	tokens    *prometheus.CounterVec
	cost      prometheus.Counter
	rebuilds  *prometheus.CounterVec
	// auditErrors counts questions whose audit log line was not written.
	auditErrors prometheus.Counter
	// feedback counts ratings by rating (up, down).
	feedback *prometheus.CounterVec
}

func newMetrics() *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "shirube_http_requests_total", Help: "HTTP requests by route and status code.",
		}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "shirube_http_request_duration_seconds", Help: "HTTP request latency by route (streams: until the last byte).",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
		}, []string{"route"}),
		answers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "shirube_answers_total", Help: "Answers by generator (extractive, llm:<model>, guard).",
		}, []string{"generator"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "shirube_refusals_total", Help: "Questions not answered, by kind (insufficient_evidence, ambiguous_query).",
		}, []string{"kind"}),
		dangerous: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "shirube_dangerous_operation_total", Help: "Answers shown with the 承認・確認が必要 banner.",
		}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "shirube_llm_tokens_total", Help: "LLM tokens used, by type (prompt, completion).",
		}, []string{"type"}),
		cost: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "shirube_llm_cost_usd_total", Help: "Estimated LLM cost in US dollars.",
		}),
		rebuilds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "shirube_index_rebuilds_total", Help: "Index rebuilds by result (ok, error).",
		}, []string{"result"}),
		auditErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "shirube_audit_log_errors_total", Help: "Questions whose audit log line could not be written (full disk, permissions).",
		}),
		feedback: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "shirube_feedback_total", Help: "Ratings of answers on the chat page, by rating (up, down).",
		}, []string{"rating"}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.answers, m.refusals, m.dangerous, m.tokens, m.cost, m.rebuilds, m.auditErrors, m.feedback,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Make the series visible before the first event.
	for _, k := range []string{"insufficient_evidence", "ambiguous_query"} {
		m.refusals.WithLabelValues(k)
	}
	for _, r := range []string{"up", "down"} {
		m.feedback.WithLabelValues(r)
	}
	for _, t := range []string{"prompt", "completion"} {
		m.tokens.WithLabelValues(t)
	}
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

func (m *metrics) observeRequest(route string, code int, d time.Duration) {
	m.requests.WithLabelValues(route, strconv.Itoa(code)).Inc()
	m.latency.WithLabelValues(route).Observe(d.Seconds())
}

// observeReply counts one answered question.
func (m *metrics) observeReply(rep assistant.Reply) {
	gen := rep.Generator
	if gen == "" {
		gen = "unknown"
	}
	m.answers.WithLabelValues(gen).Inc()
	if rep.Flags.InsufficientEvidence {
		m.refusals.WithLabelValues("insufficient_evidence").Inc()
	}
	if rep.Flags.AmbiguousQuery {
		m.refusals.WithLabelValues("ambiguous_query").Inc()
	}
	if rep.Flags.DangerousOperation {
		m.dangerous.Inc()
	}
	m.tokens.WithLabelValues("prompt").Add(float64(rep.TokenUsage.PromptTokens))
	m.tokens.WithLabelValues("completion").Add(float64(rep.TokenUsage.CompletionTokens))
	if rep.CostUSD > 0 {
		m.cost.Add(rep.CostUSD)
	}
}
