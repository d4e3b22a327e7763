package clickhouse

import (
	"context"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/hindsight-memory/hindsight/memory"
)

// Setting implements memory.EpisodicStore.
func (s *Store) Setting(ctx context.Context, key string) (string, error) {
	if err := memory.ValidateSettingKey("clickhouse: setting", key); err != nil {
		return "", err
	}
	value := ""
	err := s.queryRows(ctx, "setting", "SELECT value FROM settings FINAL WHERE key = {key:String}", func(r driver.Rows) error {
		return r.Scan(&value)
	}, ch.Named("key", key))
	return value, err
}

// PutSetting implements memory.EpisodicStore.
func (s *Store) PutSetting(ctx context.Context, key, value string) error {
	if err := memory.ValidateSettingKey("clickhouse: put setting", key); err != nil {
		return err
	}
	most, _, err := s.latestWrite(ctx, "put setting", "SELECT max(write_seq), count() FROM settings WHERE key = {key:String}", ch.Named("key", key))
	if err != nil {
		return err
	}
	seq := s.reserveAfter(1, most)
	return s.insert(ctx, "put setting", "settings", "key, value, updated_at, write_seq", 1, func(int) []any {
		return []any{key, value, toDB(s.now()), seq}
	})
}

// DeleteSetting implements memory.EpisodicStore: a lightweight DELETE of
// every write of the key, which returns once no read sees them, then a
// merge of the table (a handful of rows) so that no part on disk holds
// them either.
func (s *Store) DeleteSetting(ctx context.Context, key string) error {
	if err := memory.ValidateSettingKey("clickhouse: delete setting", key); err != nil {
		return err
	}
	if err := s.exec(ctx, "delete setting", "DELETE FROM settings WHERE key = {key:String}", ch.Named("key", key)); err != nil {
		return err
	}
	return s.exec(ctx, "delete setting", "OPTIMIZE TABLE settings FINAL")
}

// Settings implements memory.EpisodicStore.
func (s *Store) Settings(ctx context.Context, prefix string) (map[string]string, error) {
	out := map[string]string{}
	err := s.queryRows(ctx, "settings", "SELECT key, value FROM settings FINAL WHERE startsWith(key, {prefix:String})", func(r driver.Rows) error {
		var k, v string
		if err := r.Scan(&k, &v); err != nil {
			return err
		}
		out[k] = v
		return nil
	}, ch.Named("prefix", prefix))
	if err != nil {
		return nil, err
	}
	return out, nil
}
