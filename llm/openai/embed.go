package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/hindsight-memory/hindsight/memory"
)

type embedRequest struct {
	Model      string   `json:"model"`
	Input      []string `json:"input"`
	Dimensions int      `json:"dimensions,omitempty"`
}

type embedResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// Dim is the configured embedding dimension; every vector Embed returns has
// this length.
func (c *Client) Dim() int { return c.cfg.EmbeddingDim }

// Model names the embedding model and its dimension, so that a change of
// either is seen as a change of model (which means re-indexing).
func (c *Client) Model() string {
	return fmt.Sprintf("openai:%s@%d", c.cfg.EmbeddingModel, c.cfg.EmbeddingDim)
}

// Embed returns one L2-normalised vector per text, in order, sending at
// most Config.EmbeddingBatch texts per request. A vector of the wrong
// dimension is an EINVALID error: the configuration names a different
// model or dimension than the server serves.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	const op = "openai: embed"
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += c.cfg.EmbeddingBatch {
		batch := texts[start:min(start+c.cfg.EmbeddingBatch, len(texts))]
		vecs, err := c.embedBatch(ctx, op, batch)
		if err != nil {
			return nil, fmt.Errorf("%w (texts %d-%d of %d)", err, start, start+len(batch)-1, len(texts))
		}
		out = append(out, vecs...)
	}
	return out, nil
}

func (c *Client) embedBatch(ctx context.Context, op string, batch []string) ([][]float32, error) {
	model := c.cfg.EmbeddingModel
	req := embedRequest{Model: model, Input: make([]string, len(batch))}
	for i, t := range batch {
		if t == "" {
			t = " " // the API rejects empty strings; a blank embeds as "nothing"
		}
		req.Input[i] = t
	}
	if c.cfg.RequestDimensions {
		req.Dimensions = c.cfg.EmbeddingDim
	}
	data, err := c.post(ctx, op, c.embedURL, model, req)
	if err != nil {
		return nil, err
	}
	var resp embedResponse
	if err := json.Unmarshal(data, &resp); err != nil {
		return nil, fmt.Errorf("%s: model %s: the answer is not an embeddings list: %w", op, model, err)
	}
	if len(resp.Data) != len(batch) {
		return nil, fmt.Errorf("%s: model %s: asked for %d vectors, got %d", op, model, len(batch), len(resp.Data))
	}
	vecs := make([][]float32, len(batch))
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= len(batch) || vecs[d.Index] != nil {
			return nil, fmt.Errorf("%s: model %s: bad or repeated vector index %d", op, model, d.Index)
		}
		if len(d.Embedding) != c.cfg.EmbeddingDim {
			return nil, memory.Invalidf(op, "model %s returned %d-dimensional vectors but EmbeddingDim is %d: set EmbeddingDim to %d (and reindex) or pick the model the index was built with",
				model, len(d.Embedding), c.cfg.EmbeddingDim, len(d.Embedding))
		}
		if !normalize(d.Embedding) {
			return nil, fmt.Errorf("%s: model %s: vector %d is zero or not finite", op, model, d.Index)
		}
		vecs[d.Index] = d.Embedding
	}
	return vecs, nil
}

// normalize scales v to unit length in place; false if it cannot be.
func normalize(v []float32) bool {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 || math.IsInf(sum, 0) || math.IsNaN(sum) {
		return false
	}
	inv := 1 / math.Sqrt(sum)
	for i := range v {
		v[i] = float32(float64(v[i]) * inv)
	}
	return true
}
