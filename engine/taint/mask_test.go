package taint

import (
	"strings"
	"testing"
)

func TestMaskLine(t *testing.T) {
	tests := []struct{ line, want string }{
		{"API_KEY=sk-proj-4fGh82kLmN0pQrStUvWxYz12f3", "API_KEY=sk-…f3"},
		{"export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "export AWS_SECRET_ACCESS_KEY=wJa…EY"},
		{"AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "AWS_ACCESS_KEY_ID=AKI…LE"},
		{`GITHUB_TOKEN="ghp_16C7e42F292c6912E7710c838347Ae178B4a"`, `GITHUB_TOKEN="ghp…4a"`},
		{"DATABASE_URL=postgres://admin:S3cr3tP4ss@db.internal:5432/app", "DATABASE_URL=pos…pp"},
		{"  password: hunter2", "password: …"},
		{`  "client_secret": "GOCSPX-1a2B3c4D5e6F7g8H9i0J",`, `"client_secret": "GOC…0J",`},
		{"PORT=5432", "PORT=…"},
		{"EMPTY=", "EMPTY="},
		{"stripe_key: 'sk_live_51HxYzAbCdEfGhIjKlMnOp'", "stripe_key: 'sk_…Op'"},
		// Not KEY=VALUE: every word with a letter or digit is masked.
		{"-----BEGIN OPENSSH PRIVATE KEY-----", "… … … …"},
		{"b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW", "b3B…ZW"},
		{"the password is hunter2", "… … … …"},
		{"-----", "-----"},
	}
	for _, tt := range tests {
		if got := MaskLine(tt.line); got != tt.want {
			t.Errorf("MaskLine(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

// No six characters in a row of a secret survive masking.
func TestMaskLine_hidesSecrets(t *testing.T) {
	secrets := []string{
		"sk-proj-4fGh82kLmN0pQrStUvWxYz12f3", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
		"hunter2", "S3cr3tP4ss", "correct horse battery staple",
	}
	for _, s := range secrets {
		for _, line := range []string{"KEY=" + s, "key: " + s, `"key": "` + s + `"`, s, "the secret " + s + " here"} {
			got := MaskLine(line)
			for i := 0; i+6 <= len(s); i++ {
				if strings.Contains(got, s[i:i+6]) {
					t.Errorf("MaskLine(%q) = %q shows %q", line, got, s[i:i+6])
					break
				}
			}
		}
	}
}

// A long line is quoted cut: the audit keeps a bounded line per line read.
func TestMaskLine_long(t *testing.T) {
	got := MaskLine(strings.Repeat("word ", 1000))
	if n := len([]rune(got)); n != maskMax || !strings.HasSuffix(got, " …") {
		t.Errorf("MaskLine(5000 chars) = %d chars %q…, want %d ending in \" …\"", n, got[:20], maskMax)
	}
	got = MaskLine("KEY=" + strings.Repeat("x", 500))
	if got != "KEY=xxx…xx" {
		t.Errorf("MaskLine(KEY=500 x) = %q", got)
	}
}
