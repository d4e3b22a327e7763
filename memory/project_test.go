package memory

import "testing"

// A remote's URL, however it is written, names one repository.
func TestRemoteProjectID(t *testing.T) {
	for url, want := range map[string]string{
		"git@github.com:acme/shop.git":              "github.com/acme/shop",
		"https://github.com/acme/shop":              "github.com/acme/shop",
		"https://user:secret@GitHub.com/acme/shop/": "github.com/acme/shop",
		"ssh://git@gitlab.example.com:2222/a/b.git": "gitlab.example.com/a/b",
		"file:///srv/git/shop.git":                  "dir:/srv/git/shop.git",
		"/srv/git/shop":                             "dir:/srv/git/shop",
		"":                                          "",
		"not a url":                                 "",
		"https://github.com/":                       "",
	} {
		if got := RemoteProjectID(url); got != want {
			t.Errorf("RemoteProjectID(%q) = %q, want %q", url, got, want)
		}
	}
}

// A project is read as callers give it: an identity, a directory or a
// bare name (as before projects had identities).
func TestProjectOf(t *testing.T) {
	for _, c := range []struct {
		project, name string
		want          Project
	}{
		{"github.com/acme/shop", "", Project{ID: "github.com/acme/shop", Name: "shop"}},
		{"github.com/acme/shop.git/", "", Project{ID: "github.com/acme/shop", Name: "shop"}},
		{"git:9F2C", "shop", Project{ID: "git:9f2c", Name: "shop"}},
		{"git:9f2c", "", Project{ID: "git:9f2c"}},
		{"/home/dana/src/billing/", "", Project{ID: "dir:/home/dana/src/billing", Name: "billing"}},
		{"dir:/home/dana/src/billing", "", Project{ID: "dir:/home/dana/src/billing", Name: "billing"}},
		{`C:\src\billing`, "", Project{ID: "dir:C:/src/billing", Name: "billing"}},
		{"billing", "", Project{Name: "billing"}},
		{"src/billing", "", Project{Name: "billing"}},
		{"", "billing", Project{Name: "billing"}},
		{"", "", Project{}},
	} {
		if got := ProjectOf(c.project, c.name); got != c.want {
			t.Errorf("ProjectOf(%q, %q) = %+v, want %+v", c.project, c.name, got, c.want)
		}
	}
	if e := ProjectOf("github.com/acme/Shop", "").Entity(); e != NormalizeEntity("Shop") {
		t.Errorf("entity %q", e)
	}
}
