// Package eval holds Hindsight's offline evaluations. Each subpackage
// measures one capability on a public benchmark through the same code the
// service runs; see eval/locomo.
package eval
