package guard

import (
	"regexp"
	"strings"

	"github.com/shirube/shirube/internal/analysis"
)

// The danger flag (seed 002 §5.1) decides whether an answer is shown under
// the 承認・確認が必要 banner. Seed 002 matches DangerousKeywords anywhere in
// the question and the answer; that flags questions that only mention an
// operation (「ログの保存期間は何年ですか？」, whose answer says logs are
// deleted after five years; 「処理中のリクエストを切らずに再起動したい」) and
// misses requests worded otherwise (「ファイアウォールのルールを全部無効にしたい」,
// 「全ユーザーのパスワードをリセットするには？」). The detector here reads what
// the user asks to do instead:
//
//  1. the operation: an operation word (the seed's vocabulary and its
//     Japanese and command-line forms: 削除・消す・無効にする・停止・再起動・
//     リセット・権限を付与・上書き・フォーマット・rm -rf・DROP TABLE・kill -9 …)
//     of a kind (OpKind);
//  2. its role in the sentence: the text right after the operation word says
//     whether the user asks to do it (削除したい, 無効にするには, 停止しても
//     いいですか, 再起動するコマンド, a bare 「…をリセット」) or only names it
//     (削除されたファイル, 停止中のサービス, 削除ポリシー, 削除は何年後,
//     削除してはいけない, 削除しないように);
//  3. its object and scope, where the kind needs them: a reset is dangerous
//     for someone else's or everyone's credentials, not for one's own
//     forgotten password; a change is dangerous in bulk (一括, 全件); an
//     export of personal or whole data, or to outside; a format of a disk,
//     not of a date; switching off (オフ, 解除, 外す) of a security control;
//  4. mitigation: a graceful or rolling restart (graceful, 処理中のリクエスト
//     を切らずに, ダウンタイムなし) and a dry run or a look only (ドライラン,
//     確認だけ) are not the destructive operation;
//  5. whether the question asks for a fact (何年, いつ, 誰, どこ, とは —
//     analysis.QuestionType): then an operation named as the occasion
//     (再起動の際, 停止する場合) is the topic, not the request.
//
// AssessQuestion decides from the question alone, before retrieval and
// generation, so that a page can show the banner before the first word of
// the answer. AssessAnswer refines that decision with the answer: it adds
// the operation the answer quotes for the user to run — a destructive
// command line (rm -rf, DROP TABLE, kubectl delete, iptables -F, systemctl
// stop, shutdown, --force; not apachectl -k graceful) or, for a question
// that asks how to do something, a numbered or bulleted step that performs
// a dangerous operation. Prose that mentions deletion is not an operation.

// OpKind is the kind of a dangerous operation.
type OpKind string

// Operation kinds.
const (
	OpDelete     OpKind = "delete"           // 削除, 消去, rm -rf, DROP, truncate, purge …
	OpDisable    OpKind = "disable_security" // 無効化; オフ, 解除, 停止 of a security control
	OpStop       OpKind = "shutdown"         // 停止, シャットダウン, 電源を切る, systemctl stop
	OpRestart    OpKind = "restart"          // 再起動, リブート, systemctl restart
	OpReset      OpKind = "reset"            // 初期化, 工場出荷, a device or system reset
	OpCredential OpKind = "credential_reset" // リセット, 失効, 再発行 of credentials
	OpPrivilege  OpKind = "privilege"        // 権限を付与, sudoers, chmod 777
	OpMassChange OpKind = "mass_change"      // 変更, 更新, 書き換え in bulk
	OpExport     OpKind = "export"           // エクスポート, ダンプ, 持ち出し of data
	OpFirewall   OpKind = "firewall"         // firewall off, rules flushed, ports opened
	OpKill       OpKind = "kill"             // kill -9, 強制終了
	OpFormat     OpKind = "format"           // フォーマット of a disk, mkfs, dd
	OpOverwrite  OpKind = "overwrite"        // 上書き, 改ざん, git push --force
)

// Where a dangerous operation was found (Danger.Source).
const (
	SourceQuestion = "question" // the question asks to do it
	SourceAnswer   = "answer"   // the answer quotes it for the user to run
)

// Danger is the danger decision about one question, or about a question
// and its answer (see AssessQuestion, AssessAnswer). The zero value is
// "not dangerous".
type Danger struct {
	// Dangerous is true when the banner must be shown.
	Dangerous bool `json:"dangerous"`
	// Kind and Operation say what was found: the kind of operation and
	// the words (normalised) that name it. They are also set for an
	// operation judged safe because of Mitigation.
	Kind      OpKind `json:"kind,omitempty"`
	Operation string `json:"operation,omitempty"`
	// Scope is the word that widens the operation to everything (全部,
	// 一括, 全ユーザー …), if any.
	Scope string `json:"scope,omitempty"`
	// Mitigation is the word that made a requested operation safe
	// (graceful, ドライラン …), if any.
	Mitigation string `json:"mitigation,omitempty"`
	// Source is "question" or "answer": where the dangerous operation is.
	Source string `json:"source,omitempty"`
}

// op is one entry of the operation table: a pattern over normalised text
// (analysis.Normalize) that names an operation of a kind.
type op struct {
	kind OpKind
	re   *regexp.Regexp
}

// operations are the operation words in Japanese and English, the seed's
// vocabulary included (削除, 消去, 停止, 無効化, delete, drop, truncate,
// format, reset, purge, disable, shutdown, kill, clear, remove, erase,
// wipe; 証跡 is an object: see sensitiveRe). ASCII words must be whole
// words. The kind is refined by the object (objectKind).
var operations = []op{
	{OpPrivilege, regexp.MustCompile(`(?:権限|ロール|特権)を?(?:付与|与え|昇格|追加|渡|付け|つけ)|(?:管理者|オーナー|owner|admin|root|特権|フル)権限に|sudoers?に追加|(?:wheel|sudo|administrators|domain admins|admins)(?:グループ)?(?:に|を)(?:追加|入れ)|フルコントロール(?:に変更|に設定|を付与|を与え)?|昇格`)},
	{OpDelete, regexp.MustCompile(`削除|消去|抹消|破棄|廃棄|消し去|消(?:し|す|せ)|空に|クリア|\b(?:drop|truncate|purge|wipe|erase|delete|remove|clear)\b`)},
	{OpDisable, regexp.MustCompile(`無効化|無効に|無効と|\bdisable\b|(?:記録|ログ|証跡|履歴)を?残さ(?:ない|ず)|オフに|ミュート|サイレンス|\bsilence\b|\bmute\b|抑止|切(?:る|り|っ)|外(?:し|す|せ)|解除|アンインストール|\buninstall\b`)},
	{OpStop, regexp.MustCompile(`電源を(?:切|落と)|停止|シャットダウン|\bshutdown\b|\bstop\b|\bhalt\b|\bpoweroff\b|止め|落と(?:し|す|せ)|ダウンさせ`)},
	{OpRestart, regexp.MustCompile(`再起動|再始動|リブート|リスタート|\brestart\b|\breboot\b`)},
	{OpCredential, regexp.MustCompile(`リセット|\breset\b|失効|再発行`)},
	{OpReset, regexp.MustCompile(`初期化|工場出荷`)},
	{OpMassChange, regexp.MustCompile(`変更|変え|更新|書き換え|書換え|置き換え|置換|\bupdate\b`)},
	{OpExport, regexp.MustCompile(`エクスポート|\bexport\b|ダンプ|\bdump\b|持ち出|持出|書き出|ダウンロード|アップロード|コピー|複製|\bcopy\b|\bupload\b|転送|送(?:り|る|っ|信)`)},
	{OpFirewall, regexp.MustCompile(`開放|開け|全開|許可|0\.0\.0\.0/0`)},
	{OpKill, regexp.MustCompile(`強制終了|\bkill\b|\bpkill\b|\bkillall\b|\btaskkill\b`)},
	{OpFormat, regexp.MustCompile(`フォーマット|\bformat\b`)},
	{OpOverwrite, regexp.MustCompile(`上書き|改ざん|改竄`)},
}

// commands are destructive command lines, in the question or quoted by the
// answer. The mitigated forms (apachectl -k graceful, nginx -s reload,
// kubectl rollout restart) are not among them.
var commands = []op{
	{OpDelete, regexp.MustCompile(`\brm\s+-[a-z]*[rf][a-z]*\b|\bdrop\s+(?:table|database|schema|index|user)\b|\btruncate\s+table\b|\bdelete\s+from\b|\b(?:delete|drop|truncate)\s*文|\bkubectl\s+delete\b|\bhelm\s+(?:uninstall|delete)\b|\bdocker\s+(?:rm|rmi|system\s+prune|volume\s+rm)\b|\buserdel\b|\bnet\s+user\s+\S+\s+/delete\b|\bremove-item\b.*-recurse|\bflushall\b|\bdropdb\b`)},
	{OpFirewall, regexp.MustCompile(`\biptables\s+(?:-f|--flush|-x)\b|\bufw\s+disable\b|\bsystemctl\s+(?:stop|disable)\s+(?:firewalld|ufw|iptables)\b|\bnetsh\s+advfirewall\s+set\s+\S+\s+state\s+off\b`)},
	{OpDisable, regexp.MustCompile(`\bsetenforce\s+0\b|\bset-mppreference\b.*-disable\S*\s+\$?true`)},
	{OpStop, regexp.MustCompile(`\bsystemctl\s+(?:stop|disable|mask|kill)\b|\bservice\s+\S+\s+stop\b|\bshutdown\s+(?:-[a-z]+|now|/s)|\bpoweroff\b|\binit\s+0\b|\bstop-(?:service|computer)\b|\bnginx\s+-s\s+(?:stop|quit)\b|\bapachectl\s+(?:-k\s+)?stop\b|\bpg_ctl\s+\S*\s*stop\b|\bkubectl\s+(?:drain|scale\b.*--replicas[= ]0)`)},
	{OpRestart, regexp.MustCompile(`\bsystemctl\s+restart\b|\bservice\s+\S+\s+restart\b|\breboot\b|\binit\s+6\b|\bapachectl\s+(?:-k\s+)?restart\b|\brestart-(?:computer|service)\b|\bshutdown\s+-r\b`)},
	{OpKill, regexp.MustCompile(`\bkill\s+-(?:9|kill|sigkill)\b|\bpkill\b|\bkillall\b|\btaskkill\b`)},
	{OpFormat, regexp.MustCompile(`\bmkfs\b|\bdd\s+if=|\bformat\s+[a-z]:|\bwipefs\b|\bshred\b`)},
	{OpPrivilege, regexp.MustCompile(`\bchmod\s+(?:-r\s+)?[0-7]?777\b|\busermod\s+-a?g\s*(?:sudo|wheel|root|admin)\b|\bgrant\s+all\b`)},
	{OpMassChange, regexp.MustCompile(`\b(?:update\s+\S+\s+set|delete\s+from)\b[^;\n]*(?:where(?:句)?(?:なし|無し|を付けず|をつけず)|without\s+(?:a\s+)?where)`)},
	{OpOverwrite, regexp.MustCompile(`\bgit\s+push\s+(?:\S+\s+)*(?:--force|-f)\b|\bgit\s+reset\s+--hard\b|--force\b`)},
}

// Objects and scopes, over normalised text.
var (
	// securityRe names a security control: switching it off is dangerous.
	securityRe = regexp.MustCompile(`ファイアウォール|ファイヤーウォール|\bfw\b|firewall|ウイルス|ウィルス|マルウェア対策|アンチウイルス|antivirus|\bedr\b|\bxdr\b|defender|selinux|apparmor|\bmfa\b|多要素|二要素|2要素|\b2fa\b|二段階|監査|ログ記録|ログ収集|ログ転送|ロギング|syslog|証跡|アラート|監視|\bwaf\b|\bids\b|\bips\b|暗号化|セキュリティ|自動更新|\buac\b|証明書検証|利用制限|制限|画面ロック|スクリーンロック|ロック機能|アカウントロック|ブロック|フィルタリング|アクセス制御|デバイス制御`)
	// firewallRe names a firewall or its rules.
	firewallRe = regexp.MustCompile(`ファイアウォール|ファイヤーウォール|\bfw\b|firewall|セキュリティグループ|iptables|ufw|firewalld|ポート|\bacl\b|\brdp\b|\bssh\b|インバウンド|アウトバウンド|(?:外部|社外|インターネット)からの?(?:接続|通信|アクセス)`)
	// credentialRe names a credential.
	credentialRe = regexp.MustCompile(`パスワード|\bpw\b|password|認証情報|クレデンシャル|apiキー|api key|アクセスキー|トークン|秘密鍵|鍵|証明書|\bmfa\b|多要素`)
	// selfRe marks a reset of one's own credentials (self-service).
	selfRe = regexp.MustCompile(`自分|自身|私の|わたしの|忘れ`)
	// storageRe names a storage device.
	storageRe = regexp.MustCompile(`ディスク|ドライブ|\bhdd\b|\bssd\b|\busb\b|usbメモリ|sdカード|パーティション|ボリューム|ストレージ|メモリカード|\bc:`)
	// sensitiveRe names data whose export or destruction needs approval.
	sensitiveRe = regexp.MustCompile(`顧客|個人情報|会員|名簿|社員情報|ユーザー情報|ユーザ情報|データベース|\bdb\b|機密|秘密|パスワード|認証情報|秘密鍵|証跡|全件|全データ|丸ごと`)
	// outsideRe names a destination outside the organisation.
	outsideRe = regexp.MustCompile(`外部|社外|個人の|私用|私物|自宅|usb|クラウドストレージ|gmail|フリーメール`)
	// scopeRe widens an operation to everything.
	scopeRe = regexp.MustCompile(`全(?:[\p{Katakana}ー]+|部|て|件|員|体|台|社員|社|端末|部署|拠点)|すべて|一括|まとめて|丸ごと|一斉|\ball\b`)
	// gracefulRe makes a restart or stop one that does not cut service.
	gracefulRe = regexp.MustCompile(`graceful|グレースフル|(?:処理中|実行中|接続中|既存|進行中)の?(?:リクエスト|接続|セッション|処理|通信|ジョブ)を?(?:切ら|切断せ|落とさ|止め|中断せ|失わ)ず|無停止|ダウンタイム(?:なし|無し|ゼロ|を出さ)|サービスを止めずに|ローリング|rolling|リロード|\breload\b`)
	// lookOnlyRe makes any operation a look or a rehearsal.
	lookOnlyRe = regexp.MustCompile(`ドライラン|dry-?run|--dry-run|確認だけ|確認のみ|表示だけ|見るだけ|読み取り(?:専用|のみ)|シミュレーション|--what-?if`)
	// notAfterRe are characters before an operation word that make it
	// another word: 取り消し (cancel), 解消 (resolve), 打ち消し, 消しゴム.
	notAfterRe = regexp.MustCompile(`(?:取り|取|解|打ち|掻き)$`)
	// asksMeaningRe asks what a command means or how it differs: 「rm -rf
	// とは」「kill -9 と kill -15 の違い」 ask for knowledge, not to run it.
	asksMeaningRe = regexp.MustCompile(`とは|の意味|意味は|違い|って何|は何|危険性|なぜ|理由`)
)

// conj is the conjugation between an operation word and the request
// ending: 削除(し)たい, 削除(する)には, 無効に(し)たい, 書き換え(る)手順,
// 消(す)方法, 上書き(し)ていい.
const conj = `(?:に|と)?(?:する|して|し|させる|させて|させ|る|って|っ|り|す|せ)?`

// Tails: what follows an operation word up to the end of its sentence.
var (
	// requestTailRe: the user asks to do it (削除したい, 停止してください,
	// リセットするには, 停止しても問題ないですか, a bare 「…を削除」).
	requestTailRe = regexp.MustCompile(`^\s*` + conj + `\s*(?:たい|たく|てください|て下さい|てほしい|てもら|ても|ていい|てよい|てよろし|なさい|ろ$|よ$|よう|ましょう|ますか|ます$|ませんか|には|ためには|ることは(?:可能|でき)|ることができ|られ(?:ます|る)か|ればいい|ればよい|たらいい|たらよい|方$|$)`)
	// meansTailRe: the user asks for the means to do it (削除する方法,
	// 再起動するコマンド, 停止するdockerコマンド, 一括削除するPowerShell). In a
	// question that asks for a fact (…手順が書かれたマニュアルはどこ) the
	// means is the topic.
	meansTailRe = regexp.MustCompile(`^\s*` + conj + `\s*(?:の|ための)?(?:[a-z0-9\-]+\s*)?(?:方法|手順|やり方|仕方|コマンド|スクリプト|sql|クエリ|ツール|設定|画面|オプション|powershell|シェル|バッチ|プログラム|コード|ワンライナー|api)`)
	// occasionTailRe: the user plans to do it and asks about the
	// occasion (再起動する際の注意, 停止する前に). A fact question about
	// such an occasion asks for the fact.
	occasionTailRe = regexp.MustCompile(`^\s*` + conj + `\s*の?(?:際|とき|時|前に|前の|場合|にあたり|にあたって)`)
	// teFormRe: the operation continues into a later predicate
	// (ダンプして外部に送りたい, 解除して…できるようにしたい).
	teFormRe = regexp.MustCompile(`^\s*(?:に|と)?(?:して|って|て|で|し、|させて)`)
	// prohibitionTailRe: not a request — a prohibition (削除してはいけない),
	// a state (停止している), a negation (削除しないように, 停止せずに,
	// 削除できない).
	prohibitionTailRe = regexp.MustCompile(`^\s*(?:に|と)?(?:して|って|て)は|^\s*(?:し|っ)?て(?:いる|いた|います|いない|ある|あった|あります)|^\s*(?:に|と)?(?:し|さ|せ|され|でき|れ)?(?:ない|ず)`)
	// requestEndRe: a sentence that ends in a request.
	requestEndRe = regexp.MustCompile(`(?:たい|てください|て下さい|てほしい|には|方法|手順|やり方|コマンド|ようにしたい|ればいい|たらいい)`)
	// sentenceEndRe ends a sentence.
	sentenceEndRe = regexp.MustCompile(`[。？?！!\n]`)
	// stepLineRe starts a step of a procedure in an answer.
	stepLineRe = regexp.MustCompile(`^\s*(?:\d+[.)．、:]|[(（]\d+[)）]|[・\-*•]|手順\s*\d+|step\s*\d+)`)
	// accidentRe marks an operation done by mistake.
	accidentRe = regexp.MustCompile(`誤って|誤操作|間違えて|間違って|うっかり|勝手に`)
	// pastTailRe: an operation that already happened (…したときの復旧,
	// …した後に).
	pastTailRe = regexp.MustCompile(`^\s*(?:を|で)?\s*(?:し|実行し|打っ|叩い|流し|され)?た(?:とき|時|場合|後|あと|ら|せい|ため)`)
	// checkRequestRe: the request is a look or a check (…する前にバックアップを
	// 確認する方法): an operation named as its occasion is not performed.
	checkRequestRe = regexp.MustCompile(`(?:確認|点検|チェック|表示|一覧|調査)(?:する|し|でき)?(?:方法|手順|には|たい|ます|できますか)`)
	// englishRequestRe asks to do something in English.
	englishRequestRe = regexp.MustCompile(`\b(?:how (?:do|can|to|should) (?:i |we )?|i (?:want|need) to|please|command to|steps to)\b`)
)

// AssessQuestion decides from the question alone whether the answer needs
// the banner: whether the question asks to carry out a dangerous operation
// (see the comment at the top of this file). It needs no retrieval and no
// answer, so it can be decided before any text streams.
func AssessQuestion(q string) Danger {
	n := analysis.Normalize(q)
	if strings.TrimSpace(n) == "" {
		return Danger{}
	}
	qt := analysis.QuestionType(q).Kind
	asksFact := qt == analysis.KindQuantity || qt == analysis.KindDate || qt == analysis.KindWho || qt == analysis.KindDefinition
	var mitigated Danger
	for _, f := range findOperations(n, true) {
		if asksFact && (f.occasion || f.means) || !f.requested && !f.occasion {
			continue // a fact about the operation, not the operation
		}
		if f.occasion && checkRequestRe.MatchString(f.clause) {
			continue // a check before the operation
		}
		d := judge(n, f)
		if d.Dangerous {
			d.Source = SourceQuestion
			return d
		}
		if d.Mitigation != "" && mitigated.Kind == "" {
			mitigated = d
		}
	}
	return mitigated
}

// AssessAnswer refines the question's decision q (AssessQuestion of
// question) with the answer text: the answer is dangerous when it quotes a
// destructive command line or a step that performs a dangerous operation
// (「…ポートを管理者が shutdown する。」): for a question that asks how to do
// something (analysis.QuestionType: procedure) every sentence in the do
// form, for other questions that ask for no fact a numbered or bulleted
// line. A question whose
// request was mitigated (a graceful restart) keeps quoted restarts and
// stops from counting: the answer contrasts the disruptive form, it does
// not ask for it. A dangerous q stays dangerous.
func AssessAnswer(q Danger, question, answer string) Danger {
	if q.Dangerous {
		return q
	}
	n := analysis.Normalize(answer)
	if strings.TrimSpace(n) == "" {
		return q
	}
	qn := analysis.Normalize(question)
	graceful := gracefulRe.MatchString(qn)
	counts := func(k OpKind) bool { return !graceful || (k != OpRestart && k != OpStop) }
	for _, line := range strings.Split(n, "\n") {
		if lookOnlyRe.MatchString(line) {
			continue
		}
		for _, c := range commands {
			if loc := c.re.FindStringIndex(line); loc != nil && counts(c.kind) {
				return Danger{Dangerous: true, Kind: c.kind, Operation: strings.TrimSpace(line[loc[0]:loc[1]]), Source: SourceAnswer}
			}
		}
	}
	qt := analysis.QuestionType(question).Kind
	if qt != analysis.KindNone && qt != analysis.KindProcedure && qt != analysis.KindCondition {
		return q // a fact question: prose about an operation is not a step
	}
	// The answer to a procedure question is its steps, numbered or not
	// (an extractive answer quotes step sentences without their numbers);
	// in other answers only numbered or bulleted lines are steps.
	procedure := qt == analysis.KindProcedure
	for _, line := range strings.Split(n, "\n") {
		if !procedure && !stepLineRe.MatchString(line) || lookOnlyRe.MatchString(line) {
			continue
		}
		for _, f := range findOperations(line, false) {
			if !f.requested || !counts(f.kind) {
				continue
			}
			if d := judge(line, f); d.Dangerous {
				d.Source = SourceAnswer
				return d
			}
		}
	}
	return q
}

// DetectDangerousRequest reports whether the question, refined by the
// answer, needs the banner: AssessAnswer(AssessQuestion(query), query,
// answer).Dangerous.
func DetectDangerousRequest(query, answer string) bool {
	return AssessAnswer(AssessQuestion(query), query, answer).Dangerous
}

// found is one operation word in a text and its role.
type found struct {
	kind      OpKind
	word      string
	start     int // byte offset in the normalised text
	clause    string
	requested bool // the text asks to do it
	occasion  bool // the text names it as the occasion of the question
	means     bool // the text asks for the means to do it (方法, コマンド)
}

// findOperations returns the operations named in normalised text n, each
// with its role. In a question (question true) a command line is requested
// unless the question asks what it means; in an answer's step every
// command is a step to run.
func findOperations(n string, question bool) []found {
	var out []found
	for _, c := range commands {
		for _, loc := range c.re.FindAllStringIndex(n, -1) {
			f := found{kind: c.kind, word: strings.TrimSpace(n[loc[0]:loc[1]]), start: loc[0], clause: clauseAround(n, loc[0], loc[1])}
			f.requested = !question || !asksMeaningRe.MatchString(f.clause) && !accident(n[:loc[0]], sentenceTail(n[loc[1]:]))
			out = append(out, f)
		}
	}
	english := englishRequestRe.MatchString(n)
	for _, o := range operations {
		for _, loc := range o.re.FindAllStringIndex(n, -1) {
			if notAfterRe.MatchString(n[:loc[0]]) {
				continue
			}
			tail := sentenceTail(n[loc[1]:])
			f := found{kind: o.kind, word: n[loc[0]:loc[1]], start: loc[0], clause: clauseAround(n, loc[0], loc[1])}
			switch {
			case accident(n[:loc[0]], tail), prohibitionTailRe.MatchString(tail):
			case requestTailRe.MatchString(tail):
				f.requested = true
			case meansTailRe.MatchString(tail):
				f.requested, f.means = true, true
			case teFormRe.MatchString(tail):
				f.requested = requestEndRe.MatchString(tail)
			case occasionTailRe.MatchString(tail):
				f.occasion = true
			case english && isASCIIWord(f.word):
				f.requested = true
			}
			out = append(out, f)
		}
	}
	return out
}

// sentenceTail is s up to the end of its first sentence.
func sentenceTail(s string) string {
	if e := sentenceEndRe.FindStringIndex(s); e != nil {
		return s[:e[0]]
	}
	return s
}

// accident reports whether an operation, with the text before it in its
// sentence and tail after it, is an accident or an event that already
// happened (誤ってDROP TABLEしたとき, うっかり削除した): the question is about
// recovering from it.
func accident(before, tail string) bool {
	if e := sentenceEndRe.FindAllStringIndex(before, -1); len(e) > 0 {
		before = before[e[len(e)-1][1]:]
	}
	return accidentRe.MatchString(before) || pastTailRe.MatchString(tail)
}

// judge decides whether a requested operation is dangerous, given its
// object and scope (in its clause) and the mitigations of the text n.
func judge(n string, f found) Danger {
	d := Danger{Kind: f.kind, Operation: f.word, Scope: scopeRe.FindString(f.clause)}
	kind, ok := objectKind(f)
	if !ok {
		return Danger{}
	}
	d.Kind = kind
	if m := lookOnlyRe.FindString(n); m != "" {
		d.Mitigation = m
		return d
	}
	if kind == OpRestart || kind == OpStop {
		if m := gracefulRe.FindString(n); m != "" {
			d.Mitigation = m
			return d
		}
	}
	d.Dangerous = true
	return d
}

// objectKind refines the kind of an operation by its object and scope and
// reports whether the operation is dangerous at all on that object.
func objectKind(f found) (OpKind, bool) {
	c := f.clause
	switch f.kind {
	case OpDelete, OpDisable, OpStop:
		if f.kind == OpDisable && !strings.HasPrefix(f.word, "無効") && f.word != "disable" && f.word != "uninstall" && f.word != "アンインストール" && !strings.Contains(f.word, "残さ") && !securityRe.MatchString(c) {
			return "", false // オフ, 外す, 解除 of a setting that guards nothing
		}
		if firewallRe.MatchString(c) && f.kind != OpDelete || strings.Contains(c, "ルール") && firewallRe.MatchString(c) {
			return OpFirewall, true
		}
		if f.kind == OpStop && securityRe.MatchString(c) {
			return OpDisable, true
		}
		if strings.HasPrefix(f.word, "送") || (f.word == "clear" || f.word == "クリア") && !scopeRe.MatchString(c) {
			return "", false
		}
		return f.kind, true
	case OpCredential:
		if !credentialRe.MatchString(c) {
			return OpReset, true // a device, a system, a setting
		}
		if selfRe.MatchString(c) && !scopeRe.MatchString(c) {
			return "", false // one's own password
		}
		return OpCredential, true
	case OpMassChange:
		if strings.Contains(f.word, "where") {
			return OpMassChange, true // an UPDATE or DELETE of every row
		}
		if !scopeRe.MatchString(c) {
			return "", false
		}
		if credentialRe.MatchString(c) {
			return OpCredential, true
		}
		return OpMassChange, true
	case OpExport:
		if sensitiveRe.MatchString(c) || outsideRe.MatchString(c) {
			return OpExport, true
		}
		return "", false
	case OpFirewall:
		if firewallRe.MatchString(c) {
			return OpFirewall, true
		}
		return "", false
	case OpFormat:
		if f.word == "format" && !storageRe.MatchString(c) || f.word == "フォーマット" && !storageRe.MatchString(c) {
			return "", false
		}
		return OpFormat, true
	case OpOverwrite:
		if strings.HasPrefix(f.word, "上書き") && strings.Contains(c, "上書き保存") {
			return "", false // an editor's save
		}
		return OpOverwrite, true
	}
	return f.kind, true
}

// clauseAround returns the sentence of n that holds n[start:end]: the
// operation's object and scope are looked for there.
func clauseAround(n string, start, end int) string {
	from := 0
	if locs := sentenceEndRe.FindAllStringIndex(n[:start], -1); len(locs) > 0 {
		from = locs[len(locs)-1][1]
	}
	to := len(n)
	if loc := sentenceEndRe.FindStringIndex(n[end:]); loc != nil {
		to = end + loc[0]
	}
	return n[from:to]
}

// isASCIIWord reports whether s is an ASCII word (an English operation).
func isASCIIWord(s string) bool { return s != "" && isASCII(s) }
