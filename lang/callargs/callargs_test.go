package callargs

import (
	"slices"
	"strings"
	"testing"
)

func strs(ps []Param) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}

func TestAssignments(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"keyword arguments", "df = pd.read_csv('a.csv', encoding='gbk', sep=';')", []string{"encoding='gbk'", "sep=';'"}},
		{"double quotes and bare words", `df.to_sql("sales", con, if_exists="append", chunksize=500)`, []string{`if_exists="append"`, "chunksize=500"}},
		{"environment variable", "export PGTZ=UTC", []string{"PGTZ=UTC"}},
		{"subscripted key, list value", "plt.rcParams['font.sans-serif'] = ['SimHei']", []string{"plt.rcParams['font.sans-serif']=['SimHei']"}},
		{"dict value", "df.rename(columns={'a': 'b'}, inplace=True)", []string{"columns={'a': 'b'}", "inplace=True"}},
		{"a call's result is not a setting", "df = pd.read_csv('a.csv')", nil},
		{"comparison is not a setting", "if x == 3: y = 4", []string{"y=4"}},
		{"inside a string literal is data", "r = requests.get('https://x.example/v2?date=2026-01-01', timeout=60)", []string{"timeout=60"}},
		{"a --key=value flag is left to Flags", "pip install --index-url=https://pypi.example/simple pkg", nil},
		{"a quoted value ends at its line", "a = 'open\nb = 2", []string{"b=2"}},
		{"an apostrophe in a comment hides nothing", "# let's try gbk\ndf = pd.read_csv(f, encoding='gbk')", []string{"encoding='gbk'"}},
		{"last value wins, first place kept", "f(a=1, b=2, a=3)", []string{"a=3", "b=2"}},
		{"nothing", "print(chardet.detect(open('a.csv','rb').read()))", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strs(Assignments(tt.in)); !slices.Equal(got, tt.want) {
				t.Errorf("Assignments(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestFlags(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"short takes the next word, long only a value", "helm upgrade --install billing-api ./charts/billing-api -n staging --timeout 10m", []string{"--install", "-n staging", "--timeout 10m"}},
		{"written with =", "kubectl apply --dry-run=client -f deploy.yaml", []string{"--dry-run=client", "-f deploy.yaml"}},
		{"long flag with a path", "helm upgrade app ./chart --values ./prod.yaml", []string{"--values ./prod.yaml"}},
		{"a flag before a flag has no value", "rm -r -f build", []string{"-r", "-f build"}},
		{"numbers and rules are not flags", "head -5 log.txt --- x", nil},
		{"a pipe is not a value", "ps -ef | grep nginx", []string{"-ef"}},
		{"a redirection is not a value", "sort -u >out.txt", []string{"-u"}},
		{"a quoted operator is a value", "grep -e 'a|b' log.txt", []string{"-e 'a|b'"}},
		{"last value wins", "app -n a -v -n b", []string{"-n b", "-v"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strs(Flags(strings.Fields(tt.in))); !slices.Equal(got, tt.want) {
				t.Errorf("Flags(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestAddAndJoin(t *testing.T) {
	var ps []Param
	ps = Add(ps, Param{Key: "encoding", Value: "'utf-8'"})
	ps = Add(ps, Param{Key: "--force", Flag: true})
	ps = Add(ps, Param{Key: "encoding", Value: "'gbk'"})
	if got := Join(ps, " "); got != "encoding='gbk' --force" {
		t.Errorf("Join = %q", got)
	}
}
