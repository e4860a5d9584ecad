package answer

import "testing"

func TestUnwrapPDF(t *testing.T) {
	tests := []struct{ in, want string }{
		// A wrapped Japanese sentence is joined without a space.
		{"隔離した端末の利用者には、代替端末の貸与窓口を案内し、業務\n影響を最小限にする。", "隔離した端末の利用者には、代替端末の貸与窓口を案内し、業務影響を最小限にする。"},
		// Short lines (titles, table cells) stay apart.
		{"3.接続手順\nエラーコード\nE-101", "3.接続手順\nエラーコード\nE-101"},
		// A finished sentence is not joined; a numbered item starts anew.
		{"本マニュアルは、社外から社内ネットワークへ安全に接続する方法を説明する。\n次に進む。", "本マニュアルは、社外から社内ネットワークへ安全に接続する方法を説明する。\n次に進む。"},
		{"接続前に次の条件をすべて満たしていることを確認しておくこと\n2.接続手順", "接続前に次の条件をすべて満たしていることを確認しておくこと\n2.接続手順"},
		// Table rows (the PDF reader's 「| key | header: value |」) are
		// whole lines: a long row is no wrapped sentence.
		{"| 塩化セチルピリジニウム | 粘膜に使用される化粧品: 0.010 | 洗い流すもの: 5.0 |\n| 塩化ベンゼトニウム | 洗い流すもの: 0.50 |", "| 塩化セチルピリジニウム | 粘膜に使用される化粧品: 0.010 | 洗い流すもの: 5.0 |\n| 塩化ベンゼトニウム | 洗い流すもの: 0.50 |"},
		{"表 1-1 用語の定義と意味を示す表のキャプションの行です\n| 用語 | 意味 |", "表 1-1 用語の定義と意味を示す表のキャプションの行です\n| 用語 | 意味 |"},
		// A line that ends with a reading comma goes on, however short:
		// some PDFs draw each clause as its own text run.
		{"マスターディレクトリは、\nゼロトラストネットワークを実現するための、\n政府職員のアカ\nウントを格納したデータの集合体である。", "マスターディレクトリは、ゼロトラストネットワークを実現するための、政府職員のアカウントを格納したデータの集合体である。"},
		{"初期パスワードを設定し、\nかつ、\n無効化した状態で作成する。\n次に進む。", "初期パスワードを設定し、かつ、無効化した状態で作成する。\n次に進む。"},
		// A comma line before a numbered item or a heading stays apart.
		{"次の手順で行う、\n1.接続する", "次の手順で行う、\n1.接続する"},
		// Latin text is joined with a space.
		{"The VPN client must be updated before the first connection of\nthe day.", "The VPN client must be updated before the first connection of the day."},
	}
	for _, tt := range tests {
		if got := unwrapPDF(tt.in); got != tt.want {
			t.Errorf("unwrapPDF(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}
