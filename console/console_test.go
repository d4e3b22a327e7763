package console

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hindsight-memory/hindsight/auth"
	"github.com/hindsight-memory/hindsight/memory"
	"github.com/hindsight-memory/hindsight/recall"
	"github.com/hindsight-memory/hindsight/service"
)

func TestWordDiff(t *testing.T) {
	got := wordDiff("Reports use UTC timestamps.", "Reports use Beijing time timestamps.")
	var b strings.Builder
	for _, p := range got {
		b.WriteString(string(p.Op) + "[" + p.Text + "]")
	}
	if want := " [Reports use ]-[UTC ]+[Beijing time ] [timestamps.]"; b.String() != want {
		t.Errorf("diff %s, want %s", b.String(), want)
	}
	if zh := wordDiff("报表用UTC", "报表用北京时间"); len(zh) < 2 || zh[0].Text != "报表用" {
		t.Errorf("a Chinese diff keeps the shared characters: %+v", zh)
	}
}

func TestSafeNext(t *testing.T) {
	for in, want := range map[string]string{
		"/ui/memories?q=x":   "/ui/memories?q=x",
		"//evil.example/":    "/ui/",
		"https://evil":       "/ui/",
		"/ui/\r\nSet-Cookie": "/ui/",
		"/other":             "/ui/",
	} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}

// noService is a Service for pages that do not reach it.
type noService struct{}

var errNoService = errors.New("not in this test")

func (noService) Recall(context.Context, memory.Query) (recall.Response, error) {
	return recall.Response{}, errNoService
}
func (noService) Correct(context.Context, string, string, string, bool, string) (memory.Decision, bool, error) {
	return memory.Decision{}, false, errNoService
}
func (noService) Pin(context.Context, string, string, bool, string) (memory.Decision, bool, error) {
	return memory.Decision{}, false, errNoService
}
func (noService) Undo(context.Context, string, string, bool) (memory.Decision, error) {
	return memory.Decision{}, errNoService
}
func (noService) Forget(context.Context, service.ForgetRequest) (service.ForgetReceipt, error) {
	return service.ForgetReceipt{}, errNoService
}
func (noService) Release(context.Context, string, string, string, string) (memory.Decision, bool, error) {
	return memory.Decision{}, false, errNoService
}
func (noService) Authorize(context.Context, string, auth.Action) error { return errNoService }
