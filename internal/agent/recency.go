package agent

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/shirube/shirube/internal/analysis"
)

// dateRE finds dates written in a document: 2024-04-01, 2024/4/1,
// 2024.4.1, 2024年4月1日 and 令和6年4月1日 (after width normalisation).
var dateRE = regexp.MustCompile(`(令和|平成)?(\d{1,4})\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})日?`)

// latestDate is the latest plausible date written in text, as
// "YYYY-MM-DDT00:00:00" (comparable with a chunk's UpdatedAt), or "".
func latestDate(text string) string {
	best := ""
	for _, m := range dateRE.FindAllStringSubmatch(analysis.Normalize(text), -1) {
		y, _ := strconv.Atoi(m[2])
		mo, _ := strconv.Atoi(m[3])
		d, _ := strconv.Atoi(m[4])
		switch m[1] {
		case "令和":
			y += 2018
		case "平成":
			y += 1988
		}
		if y < 1900 || y > 2200 || mo < 1 || mo > 12 || d < 1 || d > 31 {
			continue
		}
		if s := fmt.Sprintf("%04d-%02d-%02dT00:00:00", y, mo, d); s > best {
			best = s
		}
	}
	return best
}
