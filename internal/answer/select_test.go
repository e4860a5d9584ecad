package answer

import (
	"context"
	"strings"
	"testing"

	"github.com/shirube/shirube/internal/analysis"
	"github.com/shirube/shirube/internal/retrieve"
)

// pdfChunk is chunk n of page 2 of a PDF.
func pdfChunk(n int, heading, text string) retrieve.Result {
	return retrieve.Result{ChunkID: "database/pdf/guide/page_002.md_" + string(rune('0'+n)), File: "database/pdf/guide/page_002.md",
		Source: "guide.pdf", Page: 2, Heading: heading, Text: text}
}

// TestExtractiveSelectsTheAnsweringSentence: for each mechanism of answer
// selection, a small document where the sentence that repeats most of the
// question's words is not the one that answers it.
func TestExtractiveSelectsTheAnsweringSentence(t *testing.T) {
	gen := NewExtractive(bigrams{}, ExtractiveOptions{})
	tests := []struct {
		name    string
		query   string
		results []retrieve.Result
		want    []string // the answer must contain each
		notWant string   // … and must not contain this
	}{
		{
			// The sentence that names the subject is cut by the chunk
			// window; the next chunk repeats its end and goes on with the
			// sentence that states when. Both chunks are retrieved.
			name:  "a sentence cut by the chunk window is completed from the next chunk",
			query: "公告を掲示板に貼り出した場合、いつ届いたものとみなされますか？",
			results: []retrieve.Result{
				lawChunk(2, "手続法 > 第九条（公告）", "# 手続法\n#### 第九条（公告）\nその旨を事務所の掲示板に貼り出すことによって公告することができる。この場合においては、貼り出した日から十日を経過したときに、その者に届いたものとみなす。"),
				lawChunk(1, "手続法 > 第九条（公告）", "# 手続法\n#### 第九条（公告）\n官庁は、相手の住所が知れないときは、通知に代えて、その旨を事務所の掲示板に貼り出すことによって公告することができる"),
				lawChunk(5, "手続法 > 第十二条（閲覧）", "# 手続法\n#### 第十二条（閲覧）\n相手は、公告の後いつでも、掲示板に貼り出した書面の閲覧を求めることができる。"),
			},
			want: []string{"通知に代えて、その旨を事務所の掲示板に貼り出すことによって公告することができる。", "貼り出した日から十日を経過したとき"},
		},
		{
			// The fact spans two sentences: the first names the subject,
			// the second holds the date; a sentence elsewhere repeats all
			// of the question's words but holds no date.
			name:  "two adjacent sentences together",
			query: "年次点検の報告書はいつまでに提出しますか？",
			results: []retrieve.Result{
				lawChunk(7, "規程 > 第九条（保存）", "# 規程\n#### 第九条（保存）\n年次点検の報告書は、提出した報告書の写しとともに保存する。"),
				lawChunk(1, "規程 > 第三条（報告）", "# 規程\n#### 第三条（報告）\n年次点検を終えた者は、点検の報告書を作成する。作成したものは、翌月の十日までに提出しなければならない。"),
			},
			want: []string{"点検の報告書を作成する。", "翌月の十日までに提出"},
		},
		{
			// The first paragraph names the role the question names (and
			// more of its words); the second names the authority together
			// with the asked act.
			name:  "who: the authority with the asked act, not the role the question names",
			query: "保安法で倉庫の保安責任者を選んだら、どこへ届け出ますか？",
			results: []retrieve.Result{
				lawChunk(1, "保安法 > 第五条", "# 保安法\n#### 第五条\n倉庫、車庫、貯蔵所その他の保管施設（これらに準ずるものとして省令で定める屋外の置場を含む。以下同じ。）で省令で定める規模以上のものの所有者は、省令で定める資格を有する者のうちから保安責任者を選び、当該倉庫について保安計画の作成、当該保安計画に基づく点検、通報及び避難の訓練の実施、消火の用に供する設備の点検及び整備、火気の使用に関する監督、構造及び設備の維持管理その他保安上必要な業務を行わせなければならない。\n\n２　前項の所有者は、保安責任者を選んだときは、遅滞なくその旨を所轄の監督署長に届け出なければならない。"),
			},
			want: []string{"監督署長に届け出"},
		},
		{
			// The sentence that names the site carries a footnote marker;
			// the footnote, lower on the same page, says who runs it.
			name:  "footnote marker resolved on the same page",
			query: "情報共有サイト「KSN」はどこが運営していますか？",
			results: []retrieve.Result{
				pdfChunk(0, "2. 情報の集約", "# 2. 情報の集約\n本報告では、1）各社が公開した情報、2）情報共有サイト KSN（*1）で公表した情報を集約しています。\n（*1）\nKousei Sharing Network：情報共有サイト。ABC、XYZ/DEF が共同で運営しています。"),
			},
			want: []string{"ABC、XYZ/DEF が共同で運営しています。", "KSN（*1）"},
		},
		{
			// A table cell says ○ with a note; the note, below other rows
			// and notes, says on what condition.
			name:  "table note marker resolved",
			query: "防虫剤のカンファーは、肌に直接触れる製品にも配合できますか？",
			results: []retrieve.Result{
				pdfChunk(1, "表 2 配合できる成分", "# 表 2 配合できる成分\n| 成分名 | 衣類用 | 肌に直接触れる製品 |\n|---|---|---|\n| カンファー | 衣類用: 0.50 | 肌に直接触れる製品: ○（注 3） |\n| メントール | 衣類用: 0.10 | 肌に直接触れる製品: 0.10 |\n| ナフタレン | 衣類用: ○ | 肌に直接触れる製品: |\n（注 1）空欄は、配合できないことを示す。\n（注 2）○印は、上限がないことを示す。\n（注 3）洗い流すものに限り、配合することができる。"),
			},
			want: []string{"洗い流すものに限り"},
		},
		{
			// An FAQ page: the heading repeats the question's words, the
			// answer to 「いつまで」 sits two questions further down.
			name:  "the sentence of the page that holds the asked kind of fact",
			query: "小口返金における返金書類の交付省略の特例は、いつまで使える措置ですか？",
			results: []retrieve.Result{
				pdfChunk(0, "", "○小口返金における返金書類の交付省略の特例\n問 3．対象者を教えてください。\n（答）\n特に制限はありません。すべての方が対象となります。\n問 4．使える期間について教えてください。\n（答）\n期限の定めのない恒久的な措置です。"),
			},
			want: []string{"期限の定めのない恒久的な措置です。"},
		},
		{
			// An FAQ's question repeats the user's question; its answer
			// says what to do in other words.
			name:  "the answer under an FAQ question that matches",
			query: "制度が始まった後に登録を申し込む場合、希望日はどう書けばよいですか？",
			results: []retrieve.Result{
				pdfChunk(3, "", "問 9．制度が始まった後に、登録を申し込むことはできますか。\n（答）\n制度の開始後でも申し込みは可能です。\n具体的には、申込書に提出日から 15 日以後の日を「登録希望日」として記入してください。"),
				pdfChunk(1, "", "問 7．制度が始まる前に登録を申し込む期限はいつですか。\n（答）\n制度の開始前に登録を受けるための申し込みの期限は、制度が始まる日の前日です。\n※ 制度の開始の日より後の日の登録を希望する場合には、申込書に登録希望日を書く必要があります。"),
			},
			want: []string{"提出日から 15 日以後の日"},
		},
		{
			// A title page: the title, the date and the body that decided
			// it stand on short lines of their own.
			name:  "a title block of short lines",
			query: "「公用車の共同利用に関する基本方針」の2022年4月1日版は、どの会議で決定されたものですか？",
			results: []retrieve.Result{
				{ChunkID: "database/pdf/policy/page_005.md_2", File: "database/pdf/policy/page_005.md", Source: "policy.pdf", Page: 5, Heading: "1 はじめに",
					Text: "# 1 はじめに\nこのような状況において、「車両の運用に関する計画」（2019 年 3 月 1 日車両管理推進会議決定）では、公用車を優先することとされた。"},
				{ChunkID: "database/pdf/policy/page_001.md_0", File: "database/pdf/policy/page_001.md", Source: "policy.pdf", Page: 1,
					Text: "公用車の共同利用に関する基本方針\n2022 年（令和 4 年）4 月 1 日\n地域交通推進会議幹事会決定\n〔キーワード〕\n公用車、共同利用"},
			},
			want: []string{"地域交通推進会議幹事会決定"},
		},
		{
			// The question sets the large works aside; the paragraph about
			// them repeats its words, the next one answers.
			name:  "what the question excludes",
			query: "倉庫を建てる工事（特に大規模なものを除く）を始める場合、いつまでに計画を届け出ますか？",
			results: []retrieve.Result{
				lawChunk(1, "建築法 > 第八条（計画の届出）", "# 建築法\n#### 第八条（計画の届出）\n２　事業者は、倉庫を建てる工事のうち重大な事故を生ずるおそれがある特に大規模な工事（複数の区画にまたがるもの及び地下に設ける部分を含む。）で、省令で定めるものを始めようとするときは、その計画を当該工事の開始の日の三十日前までに、省令で定めるところにより、大臣に届け出なければならない。\n\n３　事業者は、倉庫その他政令で定める建物を建てる工事（倉庫を建てる工事にあつては、前項の省令で定める工事を除く。）で、省令で定めるもの（仮設の建物に係るものを含む。）を始めようとするときは、その計画を当該工事の開始の日の十四日前までに、省令で定めるところにより、監督署長に届け出なければならない。"),
			},
			want:    []string{"十四日前までに"},
			notWant: "三十日前までに",
		},
		{
			// 「とは…誰」 asks who by asking what a term means; the law
			// marks its paragraphs with ○.
			name:  "who asked as a definition, paragraph marked with ○",
			query: "保安法でいう「保管者」とは、具体的に誰のことですか？",
			results: []retrieve.Result{
				lawChunk(1, "保安法 > 第四条", "# 保安法\n#### 第四条\n監督署長は、保安のために必要があるときは、保管者に対して資料の提出を命じ、又は報告を求めることができる。"),
				lawChunk(2, "保安法 > 第二条", "# 保安法\n#### 第二条\n○２　倉庫とは、物品を保管する建物をいう。\n○３　保管者とは、倉庫の所有者、管理者又は借主をいう。"),
			},
			want: []string{"所有者、管理者又は借主"},
		},
		{
			// The sentence that matches announces a list; the list holds
			// the answer.
			name:  "the list a sentence announces",
			query: "共用設備の認証として、KSMのほかにどんな認証制度が紹介されていますか？",
			results: []retrieve.Result{
				pdfChunk(4, "4.1 KSM 以外の認証", "## 4.1 KSM 以外の認証\n共用設備に関しては、KSM のほかにも以下のような第三者による認証が存在する。\n(1) ISO/IEC 99999 による認証取得\n(2) 設備安全協会 AB マーク\n(3) 米国 SafeLab"),
			},
			want: []string{"ISO/IEC 99999", "AB マーク", "SafeLab"},
		},
		{
			// The paragraph that names the case goes on with the sentence
			// that says when; the item before it (another paragraph) also
			// holds a time expression. The two sentences of one paragraph
			// are read together, not the end of one and the start of the
			// next.
			name:  "a pair within one paragraph before a pair across two",
			query: "相手の住所が知れず、会議の通知を掲示板に貼り出した場合、いつ通知が届いたことになりますか？",
			results: []retrieve.Result{
				lawChunk(3, "手続法 > 第十条（通知）", "# 手続法\n#### 第十条（通知）\n二　会議が終わる時までの間、当該会議の資料の閲覧を求めることができること。\n\n３　官庁は、会議の相手となるべき者の住所が知れない場合においては、第一項の規定による通知を、その者の氏名及び同項各号に掲げる事項を記載した書面をいつでもその者に交付する旨を当該官庁の事務所の掲示板に貼り出すことによって行うことができる"),
				lawChunk(4, "手続法 > 第十条（通知）", "# 手続法\n#### 第十条（通知）\n旨を当該官庁の事務所の掲示板に貼り出すことによって行うことができる。この場合においては、貼り出した日から十日を経過したときに、当該通知がその者に届いたものとみなす。"),
			},
			want: []string{"十日を経過したとき"},
		},
		{
			// An FAQ page: the user's words are in the FAQ's question
			// 「Q. …」, its answer 「A. …」 shares none of them, and the next
			// question follows. The answer line is quoted, not the
			// question, and the next question is no continuation.
			name:  "an FAQ's marked answer, not its question",
			query: "ログアウトしたときにウィンドウが勝手に閉じてしまいます。どの設定を変えればいいですか？",
			results: []retrieve.Result{{File: "database/help/faq/page_001.md", Heading: "Q & A集", Text: "# Q & A集\n" +
				"Q. ホストからログアウトしたときにウィンドウが勝手に閉じてしまい困る。\n" +
				"A. Setup の Auto window close を off にしてください。\n\n" +
				"Q. 起動すると勝手にシリアルポートが開かれてしまう。\n" +
				"A. Default port を TCP/IP にしてください。"}},
			want:    []string{"Auto window close を off"},
			notWant: "シリアルポート",
		},
		{
			// A table row carries a dagger; its note below the table
			// repeats the question's words but holds no number. The row
			// is read with its note, and it holds the asked range.
			name:  "a table cell's dagger note",
			query: "ReplicaSyncに標準で割り当てられるポートの範囲はいくつからいくつまでですか？",
			results: []retrieve.Result{{File: "database/guide/ports/page_001.md", Heading: "ポート > ワーカー", Text: "## ワーカー\n" +
				"| プロトコル | ポート範囲 | 目的 |\n|---|---|---|\n" +
				"| TCP | 8400 | Agent API |\n" +
				"| TCP | 41000-41999 | ReplicaSync† |\n\n" +
				"† ReplicaSyncに標準で割り当てられるポートの範囲。\n\n" +
				"割り当てられる範囲は設定で変更できます。"}},
			want: []string{"41000-41999"},
		},
		{
			// An FAQ whose question line holds two sentences, the second
			// with no question mark; a procedure section of another
			// document, far below in the retrieval, names restarting and
			// settings in its heading. The FAQ's answer is quoted with the
			// sentence that finishes it.
			name:  "an FAQ question of two sentences before a distant procedure heading",
			query: "TermPadで設定を変えても、終了して起動し直すと元に戻ってしまいます。設定を残すにはどうすればいいですか？",
			results: []retrieve.Result{
				{ChunkID: "database/help/faq/page_001.md_0", File: "database/help/faq/page_001.md", Source: "help/faq.html", Page: 1, Heading: "Q & A > 基本的な使い方", Score: 0.99,
					Text: "Q. 変更した設定が保持されない。TermPad を終了してふたたび起動すると元に戻っている。\n" +
						"A. TermPad は変更された設定を自動的に保存しません。[Setup] Save setup で明示的に保存する必要があります。\n\n" +
						"Q. 日本語が表示できない。\nA. Language を Japanese にしてください。"},
				{ChunkID: "database/ops/install/page_001.md_3", File: "database/ops/install/page_001.md", Source: "ops/install.md", Page: 1, Heading: "インストール手順 > 6.3 起動時に自動的に起動するための設定", Score: 0.26,
					Text: "## 6.3 起動時に自動的に起動するための設定\n1. ユニットファイルを作成する。\n2. systemctl enable app.service を実行する。\n3. 最後にシステムを再起動して、起動していることを確認する。"},
			},
			want:    []string{"Save setup"},
			notWant: "systemctl",
		},
		{
			// The PDF draws each clause as its own text run, so the
			// definition comes in short lines that end with a comma; they
			// are one sentence.
			name:  "PDF clauses broken after commas are one sentence",
			query: "「マスターディレクトリ」とは何のことですか？",
			results: []retrieve.Result{
				pdfChunk(0, "1.2 ディレクトリの定義", "## 1.2 ディレクトリの定義\n【マスターディレクトリ】\nマスターディレクトリは、\nゼロトラストネットワークを実現するための、\n政府職員のアカ\nウントやアセットを格納したディレクトリデータの集合体である。"),
			},
			want: []string{"マスターディレクトリは、ゼロトラストネットワークを実現するための、政府職員のアカウントやアセットを格納したディレクトリデータの集合体である。"},
		},
		{
			// A page opens with the rest of a sentence begun on the page
			// before (「は、…」): it names no subject and is no answer,
			// however many of the question's words it holds.
			name:  "a headless sentence at the top of a page is not the answer",
			query: "職員のアカウントを新しく作るとき、作成直後のアカウントはどういう状態にしますか？",
			results: []retrieve.Result{
				{ChunkID: "database/pdf/guide/page_022.md_0", File: "database/pdf/guide/page_022.md", Source: "guide.pdf", Page: 22, Score: 0.9,
					Text: "は、職員のアカウントだけでなく、外部利用者のアカウントや端末など、すべての情報について状態を評価しながら新しく作る仕組みが重要となる。"},
				pdfChunk(1, "5.4.1 アカウントの登録管理", "## 5.4.1 アカウントの登録管理\nアカウントの初期作成時は初期パスワードを設定し、かつ、無効化した状態で作成する。"),
			},
			want: []string{"無効化した状態で作成する。"},
		},
		{
			// The contents list repeats the section's heading, and with it
			// the question's words; the section says where and what.
			name:  "a table of contents entry is not the answer",
			query: "起動時に自動で立ち上げる設定で、ユニットファイルはどこに作りますか？",
			results: []retrieve.Result{
				{ChunkID: "database/ops/install/page_001.md_0", File: "database/ops/install/page_001.md", Source: "ops/install.md", Page: 1, Heading: "インストール手順 > 目次", Score: 0.9,
					Text: "## 目次\n1. テスト環境\n1. Docker CEのインストール\n1. 起動時に自動的に実行するための設定"},
				{ChunkID: "database/ops/install/page_001.md_5", File: "database/ops/install/page_001.md", Source: "ops/install.md", Page: 1, Heading: "インストール手順 > 6. 起動時に自動的に実行するための設定", Score: 0.6,
					Text: "## 6. 起動時に自動的に実行するための設定\n/etc/systemd/system に app.service を作成する。"},
			},
			want:    []string{"/etc/systemd/system に app.service を作成する。"},
			notWant: "Docker CE",
		},
		{
			// An FAQ set as headings: the heading names the term, the
			// body defines it without naming it again.
			name:  "a section titled by the asked term defines it",
			query: "うちの文書でいう「重大インシデント」とは、どういうインシデントのことですか？",
			results: []retrieve.Result{
				{ChunkID: "database/ir/what/page_001.md_0", File: "database/ir/what/page_001.md", Source: "ir/what.md", Page: 1, Score: 0.97,
					Text: "インシデント対応プロセスを定義する前に、インシデント（そして重大インシデント）とは何かを定義する必要があります。"},
				{ChunkID: "database/ir/what/page_001.md_2", File: "database/ir/what/page_001.md", Source: "ir/what.md", Page: 1, Heading: "重大インシデントとは何か？", Score: 0.8,
					Text: "## 重大インシデントとは何か？\n複数のチームによる協調の取れた対応を必要とするインシデントを指します。"},
			},
			want: []string{"複数のチームによる協調の取れた対応を必要とするインシデントを指します。"},
		},
		{
			// Both lines hold the question's words and something that
			// answers when; the one that writes the date answers more
			// surely than a deadline in words.
			name:  "a written date before a deadline in words",
			query: "ネットワーク設計のペーパーは、いつまで掲載される予定でしたか？",
			results: []retrieve.Result{
				{ChunkID: "database/dp/summary/page_001.md_0", File: "database/dp/summary/page_001.md", Source: "dp/summary.html", Page: 1, Heading: "ディスカッションペーパー", Score: 0.98,
					Text: "## ディスカッションペーパー\n**ネットワーク設計のペーパー PDF DOCX**\n（掲載期間：2023年８月）\n**ペーパーについて**\n**掲載期間の経過したネットワーク設計のペーパーは、当サイトより削除します。**"},
			},
			want:    []string{"2023年８月"},
			notWant: "削除します",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := gen.Generate(context.Background(), tt.query, tt.results)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(a.Text, w) {
					t.Errorf("answer %q lacks %q", a.Text, w)
				}
			}
			if tt.notWant != "" && strings.Contains(a.Text, tt.notWant) {
				t.Errorf("answer %q holds %q", a.Text, tt.notWant)
			}
			if n := len([]rune(a.Text)); n > 250+20 {
				t.Errorf("answer is %d characters, want it short", n)
			}
			if a.Verification == nil || a.Verification.SupportedRate < 1 {
				t.Errorf("verification %+v: every quoted sentence must be found in the chunk it cites", a.Verification)
			}
		})
	}
}

// TestStitchPair: a chunk that repeats the end of the previous one gives
// it the rest of the cut sentence and starts after it; chunks that do not
// overlap stay as they are.
func TestStitchPair(t *testing.T) {
	tests := []struct {
		name, a, b     string
		wantA, wantB   string
		wantOK, wantML bool
	}{
		{"cut mid-sentence",
			"# H\n前文である。官庁は、相手の住所が知れないときは、掲示板に貼り出すことができる",
			"# H\n住所が知れないときは、掲示板に貼り出すことができる。この場合は十日で届く。\n次の段落。",
			"# H\n前文である。官庁は、相手の住所が知れないときは、掲示板に貼り出すことができる。", "# H\nこの場合は十日で届く。\n次の段落。", true, true},
		{"cut at a line end",
			"# H\n一行目の文である。\n二行目の文で、まだ続く文章がここにある",
			"# H\n二行目の文で、まだ続く文章がここにある\n三行目。",
			"# H\n一行目の文である。\n二行目の文で、まだ続く文章がここにある", "# H\n三行目。", true, false},
		{"no overlap",
			"# H\n一つ目の章の文である。",
			"# H\nまったく別の章の文章がここから始まる。",
			"# H\n一つ目の章の文である。", "# H\nまったく別の章の文章がここから始まる。", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b, ml, ok := stitchPair(tt.a, tt.b)
			if ok != tt.wantOK || ml != tt.wantML {
				t.Fatalf("ok, midLine = %v, %v; want %v, %v", ok, ml, tt.wantOK, tt.wantML)
			}
			if a != tt.wantA || b != tt.wantB {
				t.Errorf("got\n%q\n%q\nwant\n%q\n%q", a, b, tt.wantA, tt.wantB)
			}
		})
	}
}

// TestNoteMarkers: markers in running text are references; a marker that
// opens a line is a note's label.
func TestNoteMarkers(t *testing.T) {
	refs := []struct {
		text string
		want []string // key/word pairs
	}{
		{"情報共有サイト KSN（*1）で公表した情報", []string{"*1", "ksn"}},
		{"○（注 2）", []string{"注2", ""}},
		{"対象品目※3 を除く", []string{"※3", "対象品目"}},
		{"（注 1）空欄は配合できないことを示す。", nil},
		{"第3条の規定による。", nil},
		{"| TCP | 41000-41999 | ReplicaSync† |", []string{"†", "replicasync"}},
		{"† 標準の範囲。", nil}, // a dagger that opens the line is a label
	}
	for _, tt := range refs {
		var got []string
		for _, r := range noteRefs(tt.text) {
			got = append(got, r.key, r.word)
		}
		if strings.Join(got, "/") != strings.Join(tt.want, "/") {
			t.Errorf("noteRefs(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
	labels := []struct {
		line, key, rest string
		ok              bool
	}{
		{"（*1）", "*1", "", true},
		{"（注 2）肌に触れる製品に限る。", "注2", "肌に触れる製品に限る。", true},
		{"※1 速報値である。", "※1", "速報値である。", true},
		{"注記）本方針は…", "", "", false},
		{"2）情報共有サイト", "", "", false},
		{"† 標準の範囲。", "†", "標準の範囲。", true},
		{"‡", "‡", "", true},
	}
	for _, tt := range labels {
		key, rest, ok := noteLabel(tt.line)
		if key != tt.key || rest != tt.rest || ok != tt.ok {
			t.Errorf("noteLabel(%q) = %q, %q, %v; want %q, %q, %v", tt.line, key, rest, ok, tt.key, tt.rest, tt.ok)
		}
	}
}

// TestWindowRelevanceAcrossLines: two sentences of one paragraph score
// above the same two sentences split over two lines (the end of one
// paragraph and the start of the next).
func TestWindowRelevanceAcrossLines(t *testing.T) {
	gen := NewExtractive(bigrams{}, ExtractiveOptions{})
	content := []string{"通知", "届い"}
	weights := map[string]float64{"通知": 1, "届い": 1}
	headings := []map[string]bool{{}}
	mk := func(text string, line int) *candidate {
		return &candidate{text: text, line: line, runes: len([]rune(text)), terms: termSet(bigrams{}.Terms(text)), cov: 0.5}
	}
	same1, same2 := mk("通知を貼り出す。", 0), mk("十日で届いたものとみなす。", 0)
	same1.next, same1.nextOnLine = same2, true
	cross1, cross2 := mk("通知を貼り出す。", 0), mk("十日で届いたものとみなす。", 1)
	cross1.next = cross2
	qt := analysis.QuestionType("いつ届きますか")
	in := gen.windowRelevance([]*candidate{same1, same2}, content, weights, 2, headings, qt)
	across := gen.windowRelevance([]*candidate{cross1, cross2}, content, weights, 2, headings, qt)
	if in <= 0 || across >= in {
		t.Errorf("window on one line %.3f, across two lines %.3f: want the first higher", in, across)
	}
}

// TestExampleCountsLess: a sentence that opens a worked example
// (「例えば、…」) ranks below the statement it illustrates, though it holds
// as many of the question's words.
func TestExampleCountsLess(t *testing.T) {
	gen := NewExtractive(bigrams{}, ExtractiveOptions{})
	statement := "端末あたりの通信量は、音声通話のみで最大 80kbps、ビデオ会議では 600kbps～3Mbps を必要とする。"
	example := "例えば、端末あたりの通信量は、音声通話とビデオ会議を同時に使う想定では約 2.6Mbps を必要とする。"
	p := gen.prepare("端末あたりの通信量は、音声通話とビデオ会議ではそれぞれどれくらい必要ですか？", []retrieve.Result{
		pdfChunk(0, "通信帯域", "## 通信帯域\n"+statement+"\n"+example),
	})
	rel := map[string]float64{}
	for _, c := range p.cands {
		rel[c.text] = c.rel
	}
	if rel[statement] <= rel[example] {
		t.Errorf("statement %.3f, example %.3f: the example must rank below", rel[statement], rel[example])
	}
	if rel[example] == 0 {
		t.Errorf("the example is no candidate: %v", rel)
	}
}
