package questions

import (
	"math"
	"strings"

	"github.com/shirube/shirube/internal/analysis"
)

// negativeTopic is a question about something an organisation's runbooks,
// manuals and policies are very unlikely to cover. Keys are the words that
// make it specific; the question is used only when none of them occurs in
// the corpus.
type negativeTopic struct {
	question string
	keys     []string
}

// negativeTopicsJA and negativeTopicsEN return the built-in topics. They
// are functions, not package variables, so no caller can change them.
func negativeTopicsJA() []negativeTopic {
	return []negativeTopic{
		{"社員旅行の積立金を払い戻してもらう手順を教えてください。", []string{"社員旅行", "積立金"}},
		{"社用車のタイヤをスタッドレスタイヤに交換する手順は？", []string{"スタッドレス"}},
		{"南極観測隊へ物資を送るときの申請方法を教えてください。", []string{"南極", "観測隊"}},
		{"オフィスで飼っている熱帯魚の水槽を掃除する手順は？", []string{"熱帯魚", "水槽"}},
		{"社内マラソン大会への参加申し込みの締め切りはいつですか？", []string{"マラソン"}},
		{"量子コンピュータの冷却装置を保守する手順を教えてください。", []string{"量子コンピュータ", "冷却装置"}},
		{"社員食堂の新しいメニューを提案する方法は？", []string{"社員食堂", "メニュー"}},
		{"盆踊り大会の会場設営の手順を教えてください。", []string{"盆踊り"}},
		{"観葉植物への水やりの頻度はどのように決められていますか？", []string{"観葉植物", "水やり"}},
		{"将棋部の部費を精算する手順は？", []string{"将棋"}},
		{"ドローンで屋上を点検するときの飛行許可の取り方を教えてください。", []string{"ドローン"}},
		{"富士山の山小屋を予約する手順は？", []string{"富士山", "山小屋"}},
		{"社内で蜂の巣を見つけたときの駆除手順を教えてください。", []string{"蜂の巣", "駆除"}},
		{"年末の餅つき大会で使う臼と杵の手配方法は？", []string{"餅つき", "臼"}},
		{"気象衛星のデータを受信するアンテナの向きを調整する手順は？", []string{"気象衛星", "アンテナ"}},
		{"花見の場所取りの当番はどのように決めますか？", []string{"花見", "場所取り"}},
		{"ペットの犬を会社に連れてくるときの届け出の手順は？", []string{"ペット", "犬"}},
		{"社内の卓球台を予約する方法を教えてください。", []string{"卓球"}},
		{"潜水艦の浮上手順を教えてください。", []string{"潜水艦"}},
		{"ワインセラーの温度を設定する手順は？", []string{"ワイン"}},
		{"恐竜の化石を発掘したときの届け出先はどこですか？", []string{"恐竜", "化石"}},
		{"競馬の払戻金を計算する方法を教えてください。", []string{"競馬", "払戻"}},
		{"社内合唱団の練習日程はどこで確認できますか？", []string{"合唱"}},
		{"流しそうめん大会の竹を調達する手順は？", []string{"そうめん", "竹"}},
		{"火星探査機との通信が途絶えたときの復旧手順は？", []string{"火星", "探査機"}},
		{"着物の着付け講座に申し込む方法を教えてください。", []string{"着物", "着付け"}},
		{"雪かき当番の交代を申請する手順は？", []string{"雪かき"}},
		{"社内で育てている蚕の餌やり手順を教えてください。", []string{"蚕"}},
		{"ロケット打ち上げ見学ツアーの参加条件は何ですか？", []string{"ロケット", "打ち上げ"}},
		{"茶道部の茶会で使う抹茶の購入手続きは？", []string{"茶道", "抹茶"}},
	}
}

func negativeTopicsEN() []negativeTopic {
	return []negativeTopic{
		{"How do I book the company sailing boat for a weekend trip?", []string{"sailing", "boat"}},
		{"What is the procedure for feeding the office aquarium fish?", []string{"aquarium", "fish"}},
		{"How do I register for the annual company marathon?", []string{"marathon"}},
		{"What are the steps to service the quantum computer cooling unit?", []string{"quantum", "cooling"}},
		{"How do I reserve the rooftop telescope for stargazing?", []string{"telescope", "stargazing"}},
		{"What is the dress code for the winter ski retreat?", []string{"ski", "retreat"}},
		{"How do I claim expenses for the chess club tournament?", []string{"chess"}},
		{"What is the procedure when a beehive is found on the premises?", []string{"beehive"}},
		{"How are volunteers chosen for the lunar rover demonstration?", []string{"lunar", "rover"}},
		{"How do I order birthday cakes through the cafeteria?", []string{"birthday", "cake"}},
		{"What is the procedure to adopt the office cat?", []string{"cat", "adopt"}},
		{"How do I calibrate the weather balloon launcher?", []string{"balloon", "weather"}},
		{"What steps are required to restore a dinosaur fossil?", []string{"dinosaur", "fossil"}},
		{"How do I book a table at the company wine tasting?", []string{"wine"}},
		{"How do I surface a submarine in an emergency?", []string{"submarine"}},
	}
}

// negativeRows returns about opt.NegativeRatio of the final row count as
// questions the corpus cannot answer: built-in topics, in the corpus
// language, whose key words do not occur in any document (checked on
// normalised text, so full-width and case variants count as present).
func negativeRows(docs []*doc, positives int, opt Options) []Row {
	if opt.NegativeRatio <= 0 || opt.NegativeRatio >= 1 || positives == 0 {
		return nil
	}
	want := max(1, int(math.Round(float64(positives)*opt.NegativeRatio/(1-opt.NegativeRatio))))
	var corpus strings.Builder
	ja := 0
	for _, d := range docs {
		if d.japanese {
			ja++
		}
		for _, p := range d.doc.Pages {
			corpus.WriteString(analysis.Normalize(p.Text))
			corpus.WriteByte('\n')
		}
	}
	text := corpus.String()
	topics, item := negativeTopicsJA(), "文書に記載がないため回答できないと伝える"
	if ja*2 < len(docs) {
		topics, item = negativeTopicsEN(), "says the documents do not cover this"
	}
	rng := rngFor(opt.Seed, "\x00negative")
	rng.Shuffle(len(topics), func(i, j int) { topics[i], topics[j] = topics[j], topics[i] })
	var rows []Row
	for _, t := range topics {
		if len(rows) == want {
			break
		}
		if mentionsAny(text, t.keys) {
			continue
		}
		rows = append(rows, Row{
			Question:    t.question,
			GroundTruth: RefusalText,
			Checklist:   []string{item},
			Generator:   GeneratorOffline,
			Kind:        KindNegative,
		})
	}
	return rows
}

// mentionsAny reports whether the normalised corpus contains any key.
// Latin keys must match a whole word, so "cat" is not found in "category".
func mentionsAny(corpus string, keys []string) bool {
	for _, k := range keys {
		k = analysis.Normalize(k)
		if !isASCIIWord(k) {
			if strings.Contains(corpus, k) {
				return true
			}
			continue
		}
		for i := 0; ; {
			j := strings.Index(corpus[i:], k)
			if j < 0 {
				break
			}
			j += i
			end := j + len(k)
			if (j == 0 || !isWordByte(corpus[j-1])) && (end == len(corpus) || !isWordByte(corpus[end])) {
				return true
			}
			i = j + 1
		}
	}
	return false
}

func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b >= 'A' && b <= 'Z'
}
