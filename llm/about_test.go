package llm

import (
	"testing"

	"github.com/hindsight-memory/hindsight/memory"
)

func TestAbout(t *testing.T) {
	for _, c := range []struct {
		kind memory.Kind
		text string
		want memory.About
	}{
		{memory.KindPreference, "Please email me, never call.", memory.AboutUser},
		{memory.KindPreference, "Email only, never a phone call.", memory.AboutUser},
		{memory.KindFact, "My order number is 88231.", memory.AboutUser},
		{memory.KindFact, "The user is vegetarian.", memory.AboutUser},
		{memory.KindRule, "Always answer me in German.", memory.AboutUser},
		{memory.KindFact, "I use vim keybindings everywhere.", memory.AboutUser},
		{memory.KindPreference, "以后给我发短信，别打电话。", memory.AboutUser},
		{memory.KindFact, "用户是素食者。", memory.AboutUser},
		{memory.KindRule, "We squash-merge every pull request.", memory.AboutWork},
		{memory.KindFact, "My team uses pnpm, not npm.", memory.AboutWork},
		{memory.KindRule, "Report timestamps use UTC.", memory.AboutWork},
		{memory.KindFact, "The staging database is pg-staging:5432.", memory.AboutWork},
		{memory.KindRule, "我们的报表一律用北京时间。", memory.AboutWork},
		{memory.KindRule, "退款超过500元要主管审批。", memory.AboutWork},
		{memory.KindLesson, "When I ran the import, gbk worked.", memory.AboutWork},
	} {
		if got := About(c.kind, c.text); got != c.want {
			t.Errorf("About(%s, %q) = %s, want %s", c.kind, c.text, got, c.want)
		}
	}
}
