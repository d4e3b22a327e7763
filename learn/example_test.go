package learn_test

import (
	"bytes"
	"fmt"

	"github.com/hindsight-memory/hindsight/learn"
)

// A binary judge over two scores: train, save, load, predict, measure.
func Example() {
	labels := []string{"distinct", "duplicate"}
	var xs []learn.Example
	hash := learn.NewDataHash()
	for i := range 20 {
		sim := float64(i) / 20
		label := 0
		if sim >= 0.6 {
			label = 1
		}
		xs = append(xs, learn.Example{Features: []learn.Feature{{Name: "similarity", Value: sim}, {Name: "bias", Value: 1}}, Label: label})
		hash.Add(fmt.Sprint(sim), labels[label])
	}
	train, test := learn.Split(xs, func(i int, _ learn.Example) bool { return learn.Fold(fmt.Sprint(i), 4) == 0 })
	m, err := learn.Train(labels, train, learn.Options{Binary: true, Epochs: 300, Rate: 0.5, MinCount: 1, Threshold: 0.5})
	if err != nil {
		panic(err)
	}
	m.Name, m.Features, m.Data = "judge", "j1", hash.Sum()

	var file bytes.Buffer
	if err := m.Encode(&file); err != nil {
		panic(err)
	}
	m, err = learn.Decode(&file)
	if err != nil {
		panic(err)
	}
	c := learn.NewConfusion(labels)
	for _, x := range test {
		c.Add(x.Label, m.Label(m.Predict(x.Features)))
	}
	fmt.Printf("%s: %d held out, accuracy %.2f\n", m.Name, c.Total(), c.Accuracy())
	fmt.Println(m.Positive([]learn.Feature{{Name: "similarity", Value: 0.95}, {Name: "bias", Value: 1}}))
	// Output:
	// judge: 6 held out, accuracy 1.00
	// true
}
