// Package reader holds shirube's learned reader: two small linear models
// trained on JaQuAD (31,748 human-labelled Japanese questions on Wikipedia
// paragraphs) by the project's own code (`shirube train`).
//
//   - The sentence model scores how likely a sentence, table row or list
//     item of the retrieved passages is the one that answers the question.
//     It is a conditional logit: trained so that, among the candidates of
//     one question, the softmax of the scores puts its mass on the answer
//     sentence.
//   - The answerability model gives a calibrated probability that the
//     retrieved passages answer the question at all (logistic regression;
//     its negatives are near misses made from the data itself).
//
// The features are computed by the package that owns the candidates
// (internal/answer); this package only knows them as named columns, so a
// model whose columns differ from the code's is refused at load.
//
// The shipped weights (model.json, embedded) were learned from JaQuAD's
// training split, licensed CC BY-SA 3.0; see README.md beside this file.
package reader

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
)

// Linear is a linear model over standardised features: the score of x is
// Bias + Σ W[i]·(x[i]−Mean[i])/Std[i], plus x[Offset] as it is when
// Offset names a column (a prior score the weights correct rather than
// replace; its weight is fixed at 1 and W[Offset] is 0).
type Linear struct {
	Names  []string  `json:"names"`
	Mean   []float64 `json:"mean"`
	Std    []float64 `json:"std"`
	W      []float64 `json:"w"`
	Bias   float64   `json:"bias"`
	Offset int       `json:"offset"` // -1: none
}

// Score is the model's raw score (a logit) of x. x must have one value per
// name; missing trailing values count as the mean.
func (l *Linear) Score(x []float64) float64 {
	s := l.Bias
	if l.Offset >= 0 && l.Offset < len(x) {
		s += x[l.Offset]
	}
	for i, w := range l.W {
		if i >= len(x) {
			break
		}
		s += w * (x[i] - l.Mean[i]) / l.Std[i]
	}
	return s
}

// Sigmoid maps a logit to a probability.
func Sigmoid(z float64) float64 {
	if z >= 0 {
		return 1 / (1 + math.Exp(-z))
	}
	e := math.Exp(z)
	return e / (1 + e)
}

// Model is the reader: the sentence model, the answerability model and the
// decision threshold on answerability.
type Model struct {
	// Version counts incompatible changes of the feature columns.
	Version    int    `json:"version"`
	Provenance string `json:"provenance"`
	Sentence   Linear `json:"sentence"`
	Answerable Linear `json:"answerable"`
	// Threshold is the answerability below which the evidence is judged
	// not to answer (chosen on the validation articles, see Train).
	Threshold float64 `json:"threshold"`
	// Report is what training measured on the validation articles.
	Report *Report `json:"report,omitempty"`
}

// SentenceScore is the sentence model's logit for one candidate's features.
func (m *Model) SentenceScore(x []float64) float64 { return m.Sentence.Score(x) }

// Answerability is the probability that the evidence described by x
// answers the question.
func (m *Model) Answerability(x []float64) float64 { return Sigmoid(m.Answerable.Score(x)) }

// AnswerThreshold is the answerability below which the reader refuses.
func (m *Model) AnswerThreshold() float64 { return m.Threshold }

// Check reports an error unless the model's columns are exactly the given
// feature names, in order: weights learned for other columns would score
// the wrong features.
func (m *Model) Check(sentence, answerable []string) error {
	if !slices.Equal(m.Sentence.Names, sentence) {
		return fmt.Errorf("reader model: sentence features %v, the code computes %v — retrain with `shirube train`", m.Sentence.Names, sentence)
	}
	if !slices.Equal(m.Answerable.Names, answerable) {
		return fmt.Errorf("reader model: answerability features %v, the code computes %v — retrain with `shirube train`", m.Answerable.Names, answerable)
	}
	for _, l := range []*Linear{&m.Sentence, &m.Answerable} {
		if len(l.W) != len(l.Names) || len(l.Mean) != len(l.Names) || len(l.Std) != len(l.Names) {
			return errors.New("reader model: weight, mean and std columns differ in length")
		}
		for _, s := range l.Std {
			if !(s > 0) {
				return errors.New("reader model: a feature's standard deviation is not positive")
			}
		}
	}
	return nil
}

//go:embed model.json
var shipped []byte

// Default returns the shipped model (a new copy each call).
func Default() (*Model, error) { return Decode(shipped) }

// Decode reads a model from its JSON form.
func Decode(b []byte) (*Model, error) { return decodeJSON[Model](b, "reader model") }

// Load reads a model file.
func Load(path string) (*Model, error) { return loadJSON[Model](path, "reader model") }

// Save writes m to path as indented JSON.
func (m *Model) Save(path string) error { return saveJSON(path, m) }

// decodeJSON reads a weights file's JSON form; what names it in errors.
func decodeJSON[T any](b []byte, what string) (*T, error) {
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return &v, nil
}

// loadJSON reads a weights file from disk.
func loadJSON[T any](path, what string) (*T, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return decodeJSON[T](b, what)
}

// saveJSON writes v to path as indented JSON.
func saveJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
