package diffeval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ReportBaseName is the file name, without extension, of the report of a
// run on day now: diff_eval_YYYY-MM-DD, or diff_eval_YYYY-MM-DD_N for the
// N-th run of that day.
func ReportBaseName(now time.Time, n int) string {
	day := now.Format(time.DateOnly)
	if n <= 1 {
		return "diff_eval_" + day
	}
	return fmt.Sprintf("diff_eval_%s_%d", day, n)
}

// WriteReport writes rep into dir (created if needed) as three files with
// one base name (see ReportBaseName): .json (the Report), .md (Markdown)
// and .png (Chart). It picks the first base name for which none of the
// three exists and never overwrites a file. The paths are stored in rep.
func WriteReport(dir string, now time.Time, rep *Report) error {
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("encode diff-eval report: %w", err)
	}
	js = append(js, '\n')
	var chart bytes.Buffer
	if err := png.Encode(&chart, Chart(*rep)); err != nil {
		return fmt.Errorf("encode diff-eval chart: %w", err)
	}
	md := []byte(Markdown(*rep))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create report folder: %w", err)
	}
	for n := 1; n < 10000; n++ {
		base := filepath.Join(dir, ReportBaseName(now, n))
		paths := [3]string{base + ".json", base + ".md", base + ".png"}
		if anyExists(paths[:]) {
			continue
		}
		for i, data := range [][]byte{js, md, chart.Bytes()} {
			if err := createNew(paths[i], data); err != nil {
				return err
			}
		}
		rep.JSONPath, rep.MarkdownPath, rep.ChartPath = paths[0], paths[1], paths[2]
		return nil
	}
	return fmt.Errorf("report folder %s already holds 9999 diff-eval reports for %s: move old ones away", dir, now.Format(time.DateOnly))
}

func anyExists(paths []string) bool {
	for _, p := range paths {
		if _, err := os.Lstat(p); err == nil {
			return true
		}
	}
	return false
}

// createNew writes data to a file that must not exist yet.
func createNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s appeared while writing the report: run again", path)
	}
	if err != nil {
		return fmt.Errorf("create report file: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write report file %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write report file %s: %w", path, err)
	}
	return nil
}

// Markdown renders the report: the metric table (A, B, B − A) followed by
// one row per case.
func Markdown(rep Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# 差分評価レポート (RAG 評価基準 v0.1)\n\n")
	fmt.Fprintf(&b, "- A: %s\n- B: %s\n- ケース: %s", mdCell(rep.NameA), mdCell(rep.NameB), mdCell(rep.CasesFile))
	if rep.Corpus != "" {
		fmt.Fprintf(&b, " (corpus: %s)", mdCell(rep.Corpus))
	}
	fmt.Fprintf(&b, "\n- 実行回数: 各 %d 回 / 安定判定: 一致率 %.0f%% 以上\n", rep.Runs, 100*rep.StableThreshold)
	fmt.Fprintf(&b, "- 評価: A %d 件 (SKIPPED %d)、B %d 件 (SKIPPED %d)\n", rep.A.Evaluated, rep.A.Skipped, rep.B.Evaluated, rep.B.Skipped)
	fmt.Fprintf(&b, "- 生成: A %s / B %s\n- 判定: %s (キーワード一致)\n", mdCell(rep.A.GeneratorsLine()), mdCell(rep.B.GeneratorsLine()), JudgeKeywords)
	if rep.SizesA != nil {
		fmt.Fprintf(&b, "- 容量 A: %s\n", mdCell(rep.SizesA.Line()))
	}
	if rep.SizesB != nil {
		fmt.Fprintf(&b, "- 容量 B: %s\n", mdCell(rep.SizesB.Line()))
	}
	b.WriteString("\n")

	fmt.Fprintf(&b, "| 指標 | A: %s | B: %s | B − A | 優位 |\n", mdCell(rep.NameA), mdCell(rep.NameB))
	b.WriteString("|---|---:|---:|---:|:---:|\n")
	for _, m := range rep.Metrics {
		arrow := "↑"
		if !m.HigherIsBetter {
			arrow = "↓"
		}
		fmt.Fprintf(&b, "| %s %s | %s | %s | %s | %s |\n", m.Label, arrow, pct(m.A), pct(m.B), pts(m.Diff), m.Better)
	}
	b.WriteString("\n↑ 高いほど良い / ↓ 低いほど良い。率は SKIPPED を除いたケースに対する割合（SKIPPED 率のみ全ケースに対する割合）。\n")

	if len(rep.Cases) > 0 {
		b.WriteString("\n## ケース別\n\n")
		b.WriteString("| ID | 質問 | A | B | A 根拠出現 (回) | B 根拠出現 (回) | A 再現性 | B 再現性 |\n")
		b.WriteString("|---|---|:---:|:---:|---:|---:|---:|---:|\n")
		for _, c := range rep.Cases {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", mdCell(c.ID), mdCell(c.Question),
				c.A.Verdict, c.B.Verdict, hits(c.A), hits(c.B), stability(c.A), stability(c.B))
		}
		var notes []string
		for _, c := range rep.Cases {
			for _, side := range []struct {
				name string
				o    Outcome
			}{{"A", c.A}, {"B", c.B}} {
				if side.o.Reason != "" {
					notes = append(notes, fmt.Sprintf("- %s (%s): %s — %s", mdCell(c.ID), side.name, side.o.Verdict, mdCell(side.o.Reason)))
				}
			}
		}
		if len(notes) > 0 {
			b.WriteString("\n### FAIL / SKIPPED の理由\n\n")
			b.WriteString(strings.Join(notes, "\n"))
			b.WriteString("\n")
		}
	}
	if len(rep.SkippedCases) > 0 {
		b.WriteString("\n### 読み込めなかったケース\n\n")
		for _, s := range rep.SkippedCases {
			fmt.Fprintf(&b, "- %s\n", mdCell(s))
		}
	}
	return b.String()
}

// hits renders how many answered runs contained every keyword.
func hits(o Outcome) string {
	if o.Verdict == Skipped {
		return "–"
	}
	return fmt.Sprintf("%d/%d", o.Hits, o.Answered)
}

// stability renders the agreement of the runs; "–" for a skipped case.
func stability(o Outcome) string {
	if o.Verdict == Skipped {
		return "–"
	}
	return pct(o.Stability)
}

func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

func pts(x float64) string {
	v := 100 * x
	if v == 0 {
		return "±0.0 pt"
	}
	return fmt.Sprintf("%+.1f pt", v)
}

// mdCell makes s safe inside a Markdown table cell: pipes escaped, line
// breaks flattened.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.Join(strings.Fields(s), " ")
}
