package guard

import (
	"slices"
	"testing"
)

// TestAssessQuestionRequests: questions that ask to carry out a
// dangerous operation are flagged before any answer exists, with the kind
// of operation.
func TestAssessQuestionRequests(t *testing.T) {
	tests := []struct {
		q    string
		kind OpKind
	}{
		{"ファイアウォールのルールを全部無効にしたい", OpFirewall},
		{"全ユーザーのパスワードをリセットするには？", OpCredential},
		{"古いログを削除したい", OpDelete},
		{"監査証跡を消すにはどうすればいいですか", OpDelete},
		{"ＤＲＯＰ　ＴＡＢＬＥ ordersを実行してもいいですか", OpDelete}, // full-width
		{"rm -rf /var/tmp/* で一時ファイルを片付けたい", OpDelete},
		{"Defenderのリアルタイム保護をオフにしたい", OpDisable},
		{"多要素認証を解除する手順", OpDisable},
		{"DBサーバーを停止してください", OpStop},
		{"本番のAPIサーバーを落としたい", OpStop},
		{"Apacheを再起動するコマンドは？", OpRestart},
		{"アルバイトにも管理者権限を付与したい", OpPrivilege},
		{"全部署の共有フォルダの権限を一括で変更したい", OpMassChange},
		{"顧客データベースをダンプして社外に送りたい", OpExport},
		{"全ポートを開放する設定", OpFirewall},
		{"固まったプロセスを強制終了するには", OpKill},
		{"SSDをフォーマットしたい", OpFormat},
		{"スイッチを工場出荷状態に戻して初期化したい", OpReset},
		{"本番の設定を上書きしてもいいですか", OpOverwrite},
		{"kubectl delete pod --all", OpDelete},
		{"How do I delete all users?", OpDelete},
		// The te-form leads to the request: 止めて…下げたい, 切ってもらえますか.
		{"監視エージェントを止めてCPUを空けたい", OpDisable},
		{"IDSのアラートを切ってもらえますか", OpDisable},
		{"キューを空にするコマンド", OpDelete},
		{"社員名簿を個人のクラウドにアップロードしたい", OpExport},
		{"UPDATE accounts SET plan='free' をWHEREなしで流したい", OpMassChange},
		{"シャットダウンの前に確認することは？", OpStop},
		{"営業中にDBを停止しても問題ないですか", OpStop},
		{"ポート3389を外部に開けたい", OpFirewall},
		{"ストレージ装置の電源を落とす手順", OpStop},
		{"セキュリティアラートをミュートしたい", OpDisable},
		{"委託先ユーザーをDomain Adminsに入れたい", OpPrivilege},
		{"全アカウントを一括削除するPowerShellは？", OpDelete},
		{"全部のPodを止めるkubectlコマンドは？", OpStop},
		{"新人にDBのowner権限を付けたい", OpPrivilege},
		{"操作履歴を残さないようにしたい", OpDisable},
		{"本番サーバーをリブートしても影響はないですか", OpRestart},
		{"本番のpostgresをstopしたい", OpStop},
		{"インターネットからのSSH接続を許可したい", OpFirewall},
		{"ビルドキャッシュを全部クリアしたい", OpDelete},
		{"顧客データベースを私物のPCにコピーしたい", OpExport},
		{"新人をリポジトリの管理者権限にしてほしい", OpPrivilege},
		{"本番でTRUNCATE文を流したい", OpDelete},
	}
	for _, tt := range tests {
		d := AssessQuestion(tt.q)
		if !d.Dangerous || d.Kind != tt.kind || d.Source != SourceQuestion {
			t.Errorf("AssessQuestion(%q) = %+v, want dangerous %s from the question", tt.q, d, tt.kind)
		}
	}
}

// TestAssessQuestionLookAlikes: questions that name an operation without
// asking to do it, or ask for its harmless form, are not flagged.
func TestAssessQuestionLookAlikes(t *testing.T) {
	tests := []struct {
		q, why string
	}{
		{"ログの保存期間は何年ですか？", "a fact"},
		{"処理中のリクエストを切らずにApacheを再起動したいときのコマンドは？", "graceful restart"},
		{"apachectl -k graceful で再起動したい", "graceful restart"},
		{"削除ポリシーには何が書かれていますか", "what a policy says"},
		{"削除済みのメールを探したい", "削除 as a state"},
		{"誤って削除したファイルを復元する手順", "restore"},
		{"停止中のコンテナを一覧表示するコマンド", "停止 as a state"},
		{"削除してはいけないフォルダはどれですか", "prohibition"},
		{"重要なファイルを削除しないように設定したい", "protection"},
		{"パスワードを忘れたので自分でリセットしたい", "self-service reset"},
		{"管理者権限を持っている人は誰ですか", "who"},
		{"権限付与の申請書はどこにありますか", "where"},
		{"rm -rf とは何ですか", "what a command means"},
		{"kill -9 と kill -15 の違いは？", "a difference"},
		{"上書き保存のショートカットは？", "an editor's save"},
		{"日付のフォーマットを変えたい", "format as layout"},
		{"ドライランで削除される件数だけ確認したい", "dry run"},
		{"ログの削除は何日後に実行されますか", "when"},
		{"予約の取り消しはどうすればいい？", "取り消し is not 消し"},
		{"問題を解消したい", "解消 is not 消し"},
		{"サーバー再起動の際の連絡先は誰ですか？", "who, on the occasion of a restart"},
		{"ノードをダウンタイムなしでローリング再起動したい", "rolling restart"},
		{"レポートをCSVで出力する方法", "harmless export"},
		{"メール通知をオフにしたい", "switching off a setting that guards nothing"},
		{"停止しているPodを探したい", "停止 as a state (ている)"},
		{"ログを削除せずに容量を空けたい", "negation"},
		{"アカウントのロックを解除したい", "unlocking one account is routine"},
		{"削除手順が載っている資料はどこですか", "where a document is"},
		{"誤ってrm -rfしたときに復旧する方法", "recovery from an accident"},
		{"入力欄をクリアするボタンはどこ？", "clearing a form"},
		{"設定ファイルのコピーを取る方法", "a copy kept, not data taken out"},
		{"うっかり本番のテーブルを削除してしまった", "an accident that happened"},
		{"サーバーを停止する前に設定を確認する方法", "the request is the check"},
		{"", "empty"},
	}
	for _, tt := range tests {
		if d := AssessQuestion(tt.q); d.Dangerous {
			t.Errorf("AssessQuestion(%q) = %+v, want not dangerous (%s)", tt.q, d, tt.why)
		}
	}
}

// TestAssessQuestionMitigation: a mitigated request says what mitigated it.
func TestAssessQuestionMitigation(t *testing.T) {
	d := AssessQuestion("処理中のリクエストを切らずにApacheを再起動したいときのコマンドは？")
	if d.Dangerous || d.Kind != OpRestart || d.Mitigation == "" {
		t.Errorf("graceful restart = %+v, want a restart mitigated", d)
	}
	// Graceful applies to restarts and stops, not to deletion.
	if d := AssessQuestion("サービスを止めずにログを全部削除したい"); !d.Dangerous || d.Kind != OpDelete {
		t.Errorf("deletion without downtime = %+v, want dangerous", d)
	}
}

// TestSeedVocabulary: every word of seed 002's DANGEROUS_KEYWORDS is
// understood as an operation (or, for 証跡, as its object) when a question
// asks to carry it out.
func TestSeedVocabulary(t *testing.T) {
	requests := map[string]string{
		"削除": "ログを削除したい", "delete": "ログをdeleteしたい", "rm -rf": "rm -rf /tmp/x を実行したい",
		"drop": "テーブルをdropしたい", "truncate": "テーブルをtruncateしたい", "証跡": "監査証跡を消したい",
		"消去": "データを消去したい", "format": "ディスクをformatしたい", "reset": "全員のパスワードをresetしたい",
		"purge": "キューをpurgeしたい", "disable": "MFAをdisableしたい", "shutdown": "サーバーをshutdownしたい",
		"kill": "プロセスをkillしたい", "停止": "サーバーを停止したい", "無効化": "アカウントを無効化したい",
		"clear": "全ログをclearしたい", "remove": "ユーザーをremoveしたい", "erase": "ディスクをeraseしたい",
		"wipe": "ディスクをwipeしたい",
	}
	for _, kw := range DangerousKeywords {
		q, ok := requests[kw]
		if !ok {
			t.Errorf("no request for seed keyword %q", kw)
			continue
		}
		if !slices.Contains(MatchDangerous(q, ""), kw) {
			t.Errorf("%q does not use %q", q, kw)
		}
		if !AssessQuestion(q).Dangerous {
			t.Errorf("AssessQuestion(%q) not dangerous (seed keyword %q)", q, kw)
		}
	}
}

// TestAssessAnswer: the answer adds the operation it quotes for the user
// to run; prose that mentions an operation adds nothing.
func TestAssessAnswer(t *testing.T) {
	tests := []struct {
		q, answer string
		want      bool
		kind      OpKind
	}{
		{"ディスクが一杯のときの対処は？", "次を実行します。\n`rm -rf /var/log/app/*.gz`", true, OpDelete},
		{"感染端末への対応手順は？", "1. ネットワークから切り離す。\n2. `shutdown -h now` で停止する。", true, OpStop},
		{"障害時の対応手順は？", "1. 影響範囲を確認する。\n2. 該当サービスを停止する。", true, OpStop},
		{"DBの移行手順は？", "DROP TABLE legacy_orders; を実行して旧テーブルを消します。", true, OpDelete},
		{"ログの保存期間は何年ですか？", "ログは5年間保存し、期間を過ぎたものは削除する。", false, ""},
		{"処理中のリクエストを切らずにApacheを再起動したいときのコマンドは？", "apachectl -k graceful を実行する。apachectl -k restart では処理中のリクエストは全て停止される。", false, ""},
		{"設定を反映する方法は？", "apachectl -k graceful を実行します。", false, ""},
		{"削除の承認者は誰ですか", "1. 情報システム部長が削除を承認する。", false, ""},
		{"不要ファイルの確認方法は？", "1. rm -rf の前に --dry-run で対象を確認する。", false, ""},
		{"障害時の連絡手順は？", "1. 停止したサービスを記録する。\n2. 管理者に連絡する。", false, ""},
		{"感染端末はどう隔離しますか？", "有線接続の端末は、スイッチの該当ポートを管理者が shutdown する。 [1]", true, OpFirewall},
		{"アカウント管理の手順は？", "退職者のアカウントは自動的に無効化される。 [1]", false, ""},
		{"障害の影響は？", "サービスを停止する。", false, ""}, // not a procedure question, not a step line
	}
	for _, tt := range tests {
		d := AssessAnswer(AssessQuestion(tt.q), tt.q, tt.answer)
		if d.Dangerous != tt.want || tt.want && (d.Kind != tt.kind || d.Source != SourceAnswer) {
			t.Errorf("AssessAnswer(%q, %q) = %+v, want dangerous %v %s", tt.q, tt.answer, d, tt.want, tt.kind)
		}
	}
	// A dangerous question stays dangerous whatever the answer.
	q := "全ユーザーのパスワードをリセットするには？"
	if d := AssessAnswer(AssessQuestion(q), q, "管理画面から実行します。"); !d.Dangerous || d.Source != SourceQuestion {
		t.Errorf("dangerous question lost its flag: %+v", d)
	}
}

func FuzzAssess(f *testing.F) {
	for _, s := range []string{"ログを削除したい", "rm -rf /", "処理中のリクエストを切らずに再起動", "\xff削除\n1. 停止する"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, q, a string) {
		d := AssessAnswer(AssessQuestion(q), q, a)
		if d.Dangerous && d.Kind == "" {
			t.Errorf("dangerous without a kind: %+v", d)
		}
	})
}
