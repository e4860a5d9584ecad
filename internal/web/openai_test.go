package web

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/answer"
	"github.com/shirube/shirube/internal/guard"
	"github.com/shirube/shirube/internal/llm"
	"github.com/shirube/shirube/internal/retrieve"
)

// openaiClient is the official client pointed at the fixture.
func openaiClient(f *fixture, key string) openai.Client {
	return openai.NewClient(
		option.WithBaseURL(f.ts.URL+"/v1/"),
		option.WithAPIKey(key),
		option.WithHTTPClient(f.ts.Client()),
		option.WithMaxRetries(0),
	)
}

func TestOpenAIChatCompletions(t *testing.T) {
	const token = "tok-openai-0123456789"
	a, _ := analysis.New(analysis.DefaultOptions())
	f := newFixture(t, fixtureOptions{
		gen:       streaming{extractive{answer.NewExtractive(a, answer.ExtractiveOptions{})}},
		configure: func(o *Options) { o.Token = token },
	})
	client := openaiClient(f, token)
	ctx := context.Background()

	tests := []struct {
		name       string
		messages   []openai.ChatCompletionMessageParamUnion
		wantBanner bool
		wantCites  bool
		wantText   string
	}{
		{"question", []openai.ChatCompletionMessageParamUnion{openai.UserMessage(qMalware)}, true, true, "隔離"},
		{"with history and system", []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage("You are helpful."),
			openai.UserMessage("アカウントがロックされた場合の対処法は？"),
			openai.AssistantMessage("ロック解除の手順があります。"),
			openai.UserMessage("VPN の連続接続は最長何時間までですか？"),
		}, false, true, ""},
		{"dangerous", []openai.ChatCompletionMessageParamUnion{openai.UserMessage(qDelete)}, true, true, ""},
		{"refusal", []openai.ChatCompletionMessageParamUnion{openai.UserMessage("量子コンピュータの冷却装置の保守手順を教えてください")}, false, false, guard.InsufficientEvidenceResponse[:20]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			params := openai.ChatCompletionNewParams{Model: ModelID, Messages: tt.messages}

			// Non-streaming.
			res, err := client.Chat.Completions.New(ctx, params)
			if err != nil {
				t.Fatalf("chat.completions.create: %v", err)
			}
			if res.Object != "chat.completion" || res.Model != ModelID || len(res.Choices) != 1 {
				t.Fatalf("response: %+v", res)
			}
			full := res.Choices[0].Message.Content
			checkChatText(t, full, tt.wantBanner, tt.wantCites, tt.wantText)
			if res.Choices[0].FinishReason != "stop" || res.Choices[0].Message.Role != "assistant" {
				t.Errorf("finish %q role %q", res.Choices[0].FinishReason, res.Choices[0].Message.Role)
			}
			if !res.JSON.Usage.Valid() {
				t.Error("usage missing")
			}
			var cites []Citation
			if err := json.Unmarshal([]byte(res.JSON.ExtraFields["shirube_citations"].Raw()), &cites); err != nil && tt.wantCites {
				t.Fatalf("shirube_citations: %v (%q)", err, res.JSON.ExtraFields["shirube_citations"].Raw())
			}
			if (len(cites) > 0) != tt.wantCites {
				t.Errorf("%d shirube_citations, want some: %v", len(cites), tt.wantCites)
			}
			for _, c := range cites {
				if !strings.Contains(full, c.Label) {
					t.Errorf("citation %s not in the message text", c.Label)
				}
			}

			// Streaming, through the client's accumulator.
			params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
			stream := client.Chat.Completions.NewStreaming(ctx, params)
			acc := openai.ChatCompletionAccumulator{}
			chunks := 0
			sawCitations := false
			for stream.Next() {
				ch := stream.Current()
				acc.AddChunk(ch)
				if ch.Object != "chat.completion.chunk" {
					t.Errorf("chunk object %q", ch.Object)
				}
				if raw := ch.JSON.ExtraFields["shirube_citations"].Raw(); raw != "" && raw != "null" {
					sawCitations = true
				}
				chunks++
			}
			if err := stream.Err(); err != nil {
				t.Fatalf("stream: %v", err)
			}
			if chunks < 3 {
				t.Errorf("%d chunks", chunks)
			}
			if sawCitations != tt.wantCites {
				t.Errorf("shirube_citations in stream = %v, want %v", sawCitations, tt.wantCites)
			}
			got := acc.Choices[0].Message.Content
			checkChatText(t, got, tt.wantBanner, tt.wantCites, tt.wantText)
			if !tt.wantBanner && got != full {
				t.Errorf("streamed text differs from the non-streamed one:\n%q\n%q", got, full)
			}
		})
	}
}

func checkChatText(t *testing.T, text string, banner, cites bool, want string) {
	t.Helper()
	if strings.Contains(text, guard.Banner) != banner {
		t.Errorf("banner in %q = %v, want %v", text, !banner, banner)
	}
	if strings.Contains(text, "引用元:") != cites {
		t.Errorf("citations in %q, want %v", text, cites)
	}
	if want != "" && !strings.Contains(text, want) {
		t.Errorf("%q does not contain %q", text, want)
	}
}

func TestOpenAIModelsAndErrors(t *testing.T) {
	const token = "tok-openai-0123456789"
	f := newFixture(t, fixtureOptions{configure: func(o *Options) { o.Token = token }})
	ctx := context.Background()

	client := openaiClient(f, token)
	page, err := client.Models.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 1 || page.Data[0].ID != ModelID {
		t.Errorf("models: %+v", page.Data)
	}

	wrong := openaiClient(f, "wrong")
	_, err = wrong.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model: ModelID, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(qMalware)},
	})
	var apiErr *openai.Error
	if !asOpenAIError(err, &apiErr) || apiErr.StatusCode != 401 {
		t.Errorf("wrong key: %v", err)
	}

	_, err = client.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model: ModelID, Messages: []openai.ChatCompletionMessageParamUnion{openai.AssistantMessage("hello")},
	})
	if !asOpenAIError(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(apiErr.Message, "user message") {
		t.Errorf("no user message: %v", err)
	}
}

func asOpenAIError(err error, target **openai.Error) bool {
	return errors.As(err, target)
}

// unverifying streams an answer with two statements, then — as the LLM
// generator does after claim verification — returns only the first, with
// the second moved to Unknowns.
type unverifying struct{ extractive }

func (unverifying) GenerateStream(_ context.Context, _ string, rs []retrieve.Result, _ []llm.Message, on func(string)) (answer.Answer, error) {
	on("端末をネットワークから隔離する [1]。")
	on("隔離後は端末を工場出荷状態に戻して再販する [1]。")
	return answer.Answer{
		Text:      "端末をネットワークから隔離する [1]。",
		Evidence:  []answer.Evidence{{N: 1, File: rs[0].File, Page: rs[0].Page, Heading: rs[0].Heading, Score: rs[0].Score, Excerpt: "…"}},
		Unknowns:  []string{answer.UnverifiedPrefixJA + "隔離後は端末を工場出荷状態に戻して再販する。"},
		Generator: "llm:fake",
	}, nil
}

// TestOpenAIStreamUnverifiedClaims: a claim taken out after it was
// streamed is flagged at the end of the stream.
func TestOpenAIStreamUnverifiedClaims(t *testing.T) {
	a, _ := analysis.New(analysis.DefaultOptions())
	f := newFixture(t, fixtureOptions{gen: unverifying{extractive{answer.NewExtractive(a, answer.ExtractiveOptions{})}}})
	client := openaiClient(f, "")
	stream := client.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
		Model: ModelID, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(qMalware)}})
	var got strings.Builder
	for stream.Next() {
		for _, c := range stream.Current().Choices {
			got.WriteString(c.Delta.Content)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if want := "⚠️ 根拠文書で確認できない記述のため回答から除外: 隔離後は端末を工場出荷状態に戻して再販する。"; !strings.Contains(got.String(), want) {
		t.Errorf("stream %q lacks %q", got.String(), want)
	}
}
