package bench

import (
	"strings"
	"testing"
)

// TestAdopt is seed 003's adoption rule for balanced: supported ≥ 0.90
// and citation precision ≥ 0.95.
func TestAdopt(t *testing.T) {
	for _, tc := range []struct {
		supported, precision float64
		adopt                bool
		reason               string
	}{
		{0.90, 0.95, true, "answer_supported_rate 0.900 ≥ 0.90 and citation_precision 0.950 ≥ 0.95"},
		{1, 1, true, "≥"},
		{0.89, 0.99, false, "answer_supported_rate 0.890 < 0.90"},
		{0.95, 0.94, false, "citation_precision 0.940 < 0.95"},
		{0.5, 0.5, false, "answer_supported_rate 0.500 < 0.90; citation_precision 0.500 < 0.95"},
	} {
		got := Adopt(AgentReport{Generator: "llm:gpt-4o-mini", SupportedRate: tc.supported, CitationPrecision: tc.precision})
		if got.Adopt != tc.adopt || !got.Decided || !strings.Contains(got.Reason, tc.reason) {
			t.Errorf("Adopt(%v, %v) = %+v; want adopt %t, reason with %q", tc.supported, tc.precision, got, tc.adopt, tc.reason)
		}
	}
	// Extractive answers score 1 and 1 by construction: no verdict.
	if got := Adopt(AgentReport{Generator: "extractive", SupportedRate: 1, CitationPrecision: 1}); got.Adopt || got.Decided || !strings.Contains(got.Reason, "by construction") {
		t.Errorf("Adopt(extractive, 1, 1) = %+v; want undecided", got)
	}
}

func TestProtocolWarning(t *testing.T) {
	if w := ProtocolWarning(19); !strings.Contains(w, "only 19 question(s)") || !strings.Contains(w, "at least 20") {
		t.Errorf("ProtocolWarning(19) = %q", w)
	}
	if w := ProtocolWarning(20); w != "" {
		t.Errorf("ProtocolWarning(20) = %q; want none", w)
	}
}
