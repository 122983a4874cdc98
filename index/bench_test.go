package index

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
)

// BenchmarkIndexBatch measures one Index call of 10 documents, including
// opening and closing the index, which every operation pays.
func BenchmarkIndexBatch(b *testing.B) {
	dir := b.TempDir()
	ctx := context.Background()
	st, err := OpenStore(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	x, err := OpenSearch(st, dir)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		docs := make([]Doc, 10)
		for j := range docs {
			docs[j] = Doc{ID: fmt.Sprintf("b%d-%d", i, j), Fields: map[string]string{
				"message":  fmt.Sprintf("undefined: pkg%d.Name%d (type *T has no field or method %q)", i, j, "x"),
				"code":     "MissingFieldOrMethod",
				"language": "go",
			}}
		}
		if err := x.Index(ctx, docs); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkSearch measures one Search over 1000 documents, including opening
// and closing the index.
func BenchmarkSearch(b *testing.B) {
	dir := b.TempDir()
	ctx := context.Background()
	st, err := OpenStore(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	x, err := OpenSearch(st, dir)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		docs := make([]Doc, 100)
		for j := range docs {
			docs[j] = Doc{ID: fmt.Sprintf("s%d-%d", i, j), Fields: map[string]string{
				"message":  fmt.Sprintf("undefined: pkg%d.Name%d (type *T has no field or method %q)", i, j, "x"),
				"language": "go",
			}}
		}
		if err := x.Index(ctx, docs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		hits, err := x.Search(ctx, `undefined: pkg3.Name42 (type *T has no field or method "x")`, 5)
		if err != nil {
			b.Fatal(err)
		}
		if len(hits) == 0 || hits[0].ID != "s3-42" {
			b.Fatalf("unexpected hits %v", hits)
		}
	}
}

// BenchmarkWrite measures one small Write transaction.
func BenchmarkWrite(b *testing.B) {
	dir := b.TempDir()
	ctx := context.Background()
	st, err := OpenStore(ctx, dir)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		err := st.Write(ctx, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO meta (key, value) VALUES (?, 'v')`, fmt.Sprint(i))
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		i++
	}
}
