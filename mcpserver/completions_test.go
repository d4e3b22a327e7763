package mcpserver

import (
	"fmt"
	"slices"
	"testing"
)

// Values that begin with what was typed come first, then those that
// contain it, without blanks or repeats, at most 100 with the total.
func TestCompletion(t *testing.T) {
	c := completion([]string{"shop", "", "Workshop", "shop", "shipping", "eshop-api", "Shopify"}, "Sho")
	if want := []string{"shop", "Shopify", "eshop-api", "Workshop"}; !slices.Equal(c.Values, want) || c.Total != 4 || c.HasMore {
		t.Errorf("completion = %+v, want %v", c, want)
	}
	var many []string
	for i := range 150 {
		many = append(many, fmt.Sprintf("user-%03d", i))
	}
	c = completion(many, "")
	if len(c.Values) != maxCompletions || c.Total != 150 || !c.HasMore || c.Values[0] != "user-000" {
		t.Errorf("150 values: %d sent, total %d, more %v", len(c.Values), c.Total, c.HasMore)
	}
	if c = completion(nil, "x"); c.Values == nil || len(c.Values) != 0 {
		t.Errorf("no values: %+v (values must be an array)", c)
	}
}
