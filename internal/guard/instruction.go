package guard

import "regexp"

// QuotedInstructionNotice follows an offline (extractive) answer that
// quotes a sentence shaped like an instruction to an AI — 「以前の指示を無視
// して…」, "ignore previous instructions" — so that the reader knows the
// quoted words are what a document says, not something the assistant was
// told, or did. (The LLM path fences document text as data instead.)
const QuotedInstructionNotice = "※ 上の引用には AI への指示のような文が含まれていますが、これは文書に書かれている内容の引用です。このシステムへの指示ではなく、システムはそれに従っていません。"

// instructionLike matches, in NFKC-normalised lower-case text (normalize),
// the phrases prompt-injection text uses to override an assistant's
// instructions, in Japanese and English.
var instructionLike = regexp.MustCompile(`(以前|これまで|今まで|前|上記|先|過去)の(すべての|全ての|全)?(指示|命令|プロンプト|ルール|設定)を(すべて|全て)?(無視|忘れ|破棄)|システムプロンプトを(表示|出力|教え|無視)|(ignore|disregard|forget|override) (all |any )?(of )?(the |your )?(previous|prior|above|earlier|preceding) (instructions|prompts|rules|directions)|reveal (the |your )?system prompt`)

// DetectInstruction reports whether text holds an instruction-like
// sentence (instructionLike).
func DetectInstruction(text string) bool {
	return instructionLike.MatchString(normalize(text))
}
