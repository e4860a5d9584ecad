package convert

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/shirube/shirube/internal/csvx"
)

// Shape is one of the JSON layouts a RAG system's output may have.
type Shape int

// The supported shapes, detected by Detect.
const (
	// ShapeUnknown is returned with an error for anything else.
	ShapeUnknown Shape = iota
	// ShapeArray is an array of objects: [{"question": "...", "answer": "..."}].
	ShapeArray
	// ShapeNested is an object holding such an array under a key, with any
	// other metadata beside it: {"results": [{"query": "...", "response": "...", "sources": [...]}]}.
	ShapeNested
	// ShapeFlat maps question ids (or question texts) to answers:
	// {"Q1": "answer1", "Q2": "answer2"}.
	ShapeFlat
)

// String returns the shape's name as shown in logs.
func (s Shape) String() string {
	switch s {
	case ShapeArray:
		return "array of objects"
	case ShapeNested:
		return "nested with metadata"
	case ShapeFlat:
		return "flat key-value"
	}
	return "unknown"
}

// Item is one question/answer pair found in a JSON file.
type Item struct {
	// ID is the question id of a flat-shape key that names a question
	// number ("Q1" gives "1"); "" when the question must be matched by text.
	ID string
	// Question is the question text ("" for id-only items).
	Question string
	// Answer is the RAG answer. Strings are kept as they are, null is "",
	// numbers and booleans are their JSON text, and objects or arrays are
	// compact JSON.
	Answer string
}

// Field names accepted for the question and answer of an object, compared
// with csvx.MatchColumn (case, '_', '-' and spaces do not matter), and the
// names preferred for the list when an object holds several arrays.
const (
	questionKeys = "question|query|q|prompt|input|question text|質問"
	answerKeys   = "answer|response|rag answer|output|result|generated answer|a|回答"
	listKeys     = "results|data|items|answers|responses|questions|records|entries"
)

// matchKey returns the index in keys of the first name in the
// "|"-separated list names, or -1.
func matchKey(keys []string, names string) int {
	n := strings.Split(names, "|")
	return csvx.MatchColumn(keys, n[0], n[1:]...)
}

// idPattern recognises flat-shape keys that are question ids: "Q1", "q_01",
// "Question 3", "#4", "5".
var idPattern = regexp.MustCompile(`^(?i)\s*(?:q(?:uestion)?)?\s*[_#\-.:]?\s*(?:no\.?|num(?:ber)?)?\s*[_#\-.:]?\s*0*(\d+)\s*$`)

// QuestionID returns the canonical number of a question id such as "Q1",
// "q_01", "Question 3" or "007" ("1", "1", "3", "7"), and false when s is not
// a question id.
func QuestionID(s string) (string, bool) {
	m := idPattern.FindStringSubmatch(s)
	if m == nil {
		return "", false
	}
	n, err := strconv.ParseUint(m[1], 10, 63)
	if err != nil {
		return "", false
	}
	return strconv.FormatUint(n, 10), true
}

// Detect parses data and reports which shape it has, without extracting the
// items. It is Parse without the result.
func Detect(data []byte) (Shape, error) {
	_, shape, err := Parse(data)
	return shape, err
}

// Parse detects the shape of one JSON document and returns its items in file
// order. Objects in an array that have neither a question nor an answer
// field are skipped; an object with only one of them gives an item with the
// other empty.
func Parse(data []byte) ([]Item, Shape, error) {
	data = bytes.TrimPrefix(data, []byte(csvx.BOM))
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, ShapeUnknown, fmt.Errorf("not valid JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, ShapeUnknown, errors.New("not valid JSON: more than one value in the file")
	}
	switch t := v.(type) {
	case []any:
		items, err := fromArray(t)
		return items, ShapeArray, err
	case map[string]any:
		if key, ok := findList(t); ok {
			items, err := fromArray(t[key].([]any))
			if err != nil {
				return nil, ShapeNested, fmt.Errorf("%q: %w", key, err)
			}
			return items, ShapeNested, nil
		}
		if items, ok := fromSingle(t); ok {
			return items, ShapeArray, nil
		}
		items, err := fromFlat(data, t)
		return items, ShapeFlat, err
	}
	return nil, ShapeUnknown, errors.New("unsupported JSON layout: expected an array of {question, answer} objects, an object with a \"results\" array, or an object mapping question ids to answers")
}

// findList returns the key of the array of objects inside obj, preferring
// the names in listKeys, then the first such key in sorted order.
func findList(obj map[string]any) (string, bool) {
	var keys []string
	for k, v := range obj {
		if arr, ok := v.([]any); ok && isObjectList(arr) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return "", false
	}
	sort.Strings(keys)
	if i := matchKey(keys, listKeys); i >= 0 {
		return keys[i], true
	}
	return keys[0], true
}

// isObjectList reports whether arr is non-empty and its first element is an
// object with a question or answer field.
func isObjectList(arr []any) bool {
	if len(arr) == 0 {
		return false
	}
	o, ok := arr[0].(map[string]any)
	if !ok {
		return false
	}
	q, a := fields(o)
	return q >= 0 || a >= 0
}

// fields returns the indexes, in sortedKeys(o), of the question and answer
// fields of o, or -1.
func fields(o map[string]any) (q, a int) {
	keys := sortedKeys(o)
	return matchKey(keys, questionKeys), matchKey(keys, answerKeys)
}

func sortedKeys(o map[string]any) []string {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// fromSingle accepts one {question, answer} object on its own.
func fromSingle(o map[string]any) ([]Item, bool) {
	q, a := fields(o)
	if q < 0 || a < 0 {
		return nil, false
	}
	keys := sortedKeys(o)
	return []Item{{Question: text(o[keys[q]]), Answer: text(o[keys[a]])}}, true
}

func fromArray(arr []any) ([]Item, error) {
	var items []Item
	for _, e := range arr {
		o, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("array element is %s, expected an object with question and answer fields", kind(e))
		}
		q, a := fields(o)
		if q < 0 && a < 0 {
			continue
		}
		keys := sortedKeys(o)
		var it Item
		if q >= 0 {
			it.Question = text(o[keys[q]])
		}
		if a >= 0 {
			it.Answer = text(o[keys[a]])
		}
		items = append(items, it)
	}
	return items, nil
}

// fromFlat reads a flat object in file order (so warnings follow the file).
func fromFlat(data []byte, obj map[string]any) ([]Item, error) {
	for k, v := range obj {
		switch v.(type) {
		case map[string]any, []any:
			return nil, fmt.Errorf("unsupported JSON layout: key %q holds a %s; a flat file maps each question id to an answer string", k, kind(v))
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil { // '{'
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	type keyedItem struct {
		key string
		Item
	}
	var items []keyedItem
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("not valid JSON: %w", err)
		}
		key, _ := tok.(string)
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("not valid JSON: %w", err)
		}
		if seen[key] { // duplicate keys: encoding/json keeps the last; so do we
			for i := range items {
				if items[i].key == key {
					items[i].Item.Answer = text(v)
				}
			}
			continue
		}
		seen[key] = true
		it := keyedItem{key: key, Item: Item{Answer: text(v)}}
		if id, ok := QuestionID(key); ok {
			it.ID = id
		} else {
			it.Question = key
		}
		items = append(items, it)
	}
	out := make([]Item, len(items))
	for i, it := range items {
		out[i] = it.Item
	}
	return out, nil
}

// text renders a JSON value as answer text.
func text(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case json.Number:
		return t.String()
	case bool:
		return strconv.FormatBool(t)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// kind names the JSON type of v for error messages.
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
