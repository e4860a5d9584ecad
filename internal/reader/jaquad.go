package reader

import (
	"bufio"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"strings"

	"github.com/ulikunitz/xz"
)

// SQuAD is a reading-comprehension set in the SQuAD layout (JaQuAD's).
type SQuAD struct {
	Version string    `json:"version"`
	Data    []Article `json:"data"`
}

// Article is one Wikipedia article with its paragraphs.
type Article struct {
	Title      string      `json:"title"`
	Paragraphs []Paragraph `json:"paragraphs"`
}

// Paragraph is one paragraph and the questions asked about it.
type Paragraph struct {
	Context string `json:"context"`
	QAs     []QA   `json:"qas"`
}

// QA is one question with its answer spans.
type QA struct {
	ID           string       `json:"id"`
	Question     string       `json:"question"`
	Answers      []AnswerSpan `json:"answers"`
	QuestionType string       `json:"question_type"`
}

// AnswerSpan is an answer's text and where it starts in the context, in
// characters (code points).
type AnswerSpan struct {
	Text       string `json:"text"`
	Start      int    `json:"answer_start"`
	AnswerType string `json:"answer_type"`
}

// LoadSQuAD reads a SQuAD-layout JSON file, xz-compressed when its name
// ends in .xz.
func LoadSQuAD(path string) (*SQuAD, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("training data: %w", err)
	}
	defer f.Close()
	var r io.Reader = bufio.NewReaderSize(f, 1<<20)
	if strings.HasSuffix(path, ".xz") {
		if r, err = xz.NewReader(r); err != nil {
			return nil, fmt.Errorf("training data %s: %w", path, err)
		}
	}
	var s SQuAD
	if err := json.NewDecoder(r).Decode(&s); err != nil {
		return nil, fmt.Errorf("training data %s: %w", path, err)
	}
	if len(s.Data) == 0 {
		return nil, fmt.Errorf("training data %s: no articles", path)
	}
	return &s, nil
}

// Validation reports whether an article belongs to the validation split:
// a tenth of the articles, chosen by a hash of the title, so that every
// question of one article falls on the same side.
func Validation(title string) bool {
	h := fnv.New32a()
	h.Write([]byte(title))
	return h.Sum32()%10 == 0
}
