package textdoc

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestStore(t *testing.T) {
	const uri = "file:///a.go"
	s := NewStore()
	if _, ok := s.Get(uri); ok {
		t.Fatal("Get on an empty store found a document")
	}
	if _, err := s.Change(uri, 1, nil, UTF16); !errors.Is(err, ErrNotOpen) {
		t.Fatalf("Change before Open: %v, want ErrNotOpen", err)
	}
	s.Open(uri, 3, "hello\nworld")

	tests := []struct {
		name        string
		version     int32
		changes     []Change
		enc         Encoding
		wantErr     error
		wantText    string
		wantVersion int32
		wantInErr   []string
	}{
		{"ranged edit", 4, []Change{{rng(1, 0, 1, 5), "😀"}}, UTF16, nil, "hello\n😀", 4, nil},
		{"same version", 4, []Change{{rng(0, 0, 0, 0), "x"}}, UTF16, ErrVersion, "hello\n😀", 4,
			[]string{uri, "version 4 to 4"}},
		{"older version", 2, []Change{{rng(0, 0, 0, 0), "x"}}, UTF16, ErrVersion, "hello\n😀", 4, nil},
		{"inside emoji", 5, []Change{{rng(1, 1, 1, 1), "x"}}, UTF16, ErrOutOfRange, "hello\n😀", 4,
			[]string{uri, "version 4 to 5", "1:1"}},
		{"line past the end", 5, []Change{{rng(0, 0, 0, 0), "ok"}, {rng(7, 0, 7, 0), "x"}}, UTF16, ErrOutOfRange, "hello\n😀", 4,
			[]string{"7:0"}},
		{"utf-8 edit", 5, []Change{{rng(1, 4, 1, 4), "!"}}, UTF8, nil, "hello\n😀!", 5, nil},
		{"versions may skip", 9, []Change{{nil, "new"}}, UTF16, nil, "new", 9, nil},
	}
	for _, tt := range tests {
		d, err := s.Change(uri, tt.version, tt.changes, tt.enc)
		if tt.wantErr != nil {
			if !errors.Is(err, tt.wantErr) || d != nil {
				t.Errorf("%s: Change = %v, %v, want %v", tt.name, d, err, tt.wantErr)
			}
			for _, frag := range tt.wantInErr {
				if err != nil && !strings.Contains(err.Error(), frag) {
					t.Errorf("%s: error %q does not contain %q", tt.name, err, frag)
				}
			}
		} else if err != nil {
			t.Errorf("%s: Change: %v", tt.name, err)
		}
		cur, ok := s.Get(uri)
		if !ok || cur.Text() != tt.wantText || cur.Version() != tt.wantVersion {
			t.Errorf("%s: stored %q version %d, want %q version %d", tt.name, cur.Text(), cur.Version(), tt.wantText, tt.wantVersion)
		}
		if tt.wantErr == nil && cur != d {
			t.Errorf("%s: Change returned a different snapshot from the stored one", tt.name)
		}
	}

	// Open replaces the document whatever the versions.
	s.Open(uri, 1, "reopened")
	if d, _ := s.Get(uri); d.Text() != "reopened" || d.Version() != 1 {
		t.Errorf("after reopening: %q version %d", d.Text(), d.Version())
	}
	s.Close(uri)
	s.Close(uri) // closing twice is harmless
	if _, ok := s.Get(uri); ok {
		t.Error("Get found a closed document")
	}
	if _, err := s.Change(uri, 2, nil, UTF16); !errors.Is(err, ErrNotOpen) {
		t.Errorf("Change after Close: %v, want ErrNotOpen", err)
	}
}

func TestStoreAll(t *testing.T) {
	var s Store // the zero value is usable
	if all := s.All(); len(all) != 0 {
		t.Fatalf("All on an empty store = %v", all)
	}
	for _, uri := range []string{"file:///c", "file:///a", "file:///b"} {
		s.Open(uri, 1, uri)
	}
	s.Close("file:///b")
	var uris []string
	for _, d := range s.All() {
		uris = append(uris, d.URI())
	}
	if got := strings.Join(uris, " "); got != "file:///a file:///c" {
		t.Errorf("All = %s", got)
	}
}

// TestStoreConcurrent runs writers and readers together so that the race
// detector can check the locking, and checks that no edit is lost when
// several goroutines append to the same document.
func TestStoreConcurrent(t *testing.T) {
	s := NewStore()
	const writers, edits = 4, 100
	for w := range writers {
		s.Open(fmt.Sprintf("file:///%d", w), 0, "")
	}
	s.Open("file:///shared", 0, "")
	var mu sync.Mutex // serializes version choice for the shared document
	shared := int32(0)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			uri := fmt.Sprintf("file:///%d", w)
			for i := range edits {
				if _, err := s.Change(uri, int32(i+1), []Change{{rng(uint32(i), 0, uint32(i), 0), "x\n"}}, UTF16); err != nil {
					t.Errorf("%s: %v", uri, err)
					return
				}
				mu.Lock()
				shared++
				_, err := s.Change("file:///shared", shared, []Change{{rng(0, 0, 0, 0), "y"}}, UTF16)
				mu.Unlock()
				if err != nil {
					t.Errorf("shared: %v", err)
					return
				}
			}
		})
		wg.Go(func() {
			for range edits {
				for _, d := range s.All() {
					_ = d.Line(d.LineCount() / 2)
					_ = d.PositionAt(len(d.Text())/2, UTF16)
				}
			}
		})
	}
	wg.Wait()
	for w := range writers {
		d, _ := s.Get(fmt.Sprintf("file:///%d", w))
		if want := strings.Repeat("x\n", edits); d.Text() != want || d.Version() != edits {
			t.Errorf("%s: %q version %d", d.URI(), d.Text(), d.Version())
		}
	}
	if d, _ := s.Get("file:///shared"); d.Text() != strings.Repeat("y", writers*edits) {
		t.Errorf("shared: %d bytes, want %d", len(d.Text()), writers*edits)
	}
}

// TestEditsBetween replays the logged edits of several versions over the old
// text and must arrive at the current text: that is what moving a finding
// computed for an old version relies on.
func TestEditsBetween(t *testing.T) {
	const uri = "file:///a.go"
	s := NewStore()
	s.Open(uri, 1, "alpha\nbeta\ngamma\n")
	old := "alpha\nbeta\ngamma\n"
	steps := []struct {
		version int32
		changes []Change
	}{
		{2, []Change{{rng(0, 0, 0, 5), "ALPHA"}}},
		{3, []Change{{rng(1, 0, 1, 0), "x"}, {rng(2, 5, 2, 5), "!"}}},
		{4, []Change{{nil, "whole\nnew\n"}, {rng(0, 0, 0, 0), ">"}}},
	}
	for _, st := range steps {
		if _, err := s.Change(uri, st.version, st.changes, UTF16); err != nil {
			t.Fatal(err)
		}
	}
	cur, _ := s.Get(uri)
	for since, text := range map[int32]string{1: old, 2: "ALPHA\nbeta\ngamma\n"} {
		edits, ok := s.EditsBetween(uri, since, 4)
		if !ok {
			t.Fatalf("EditsBetween(%d) unknown", since)
		}
		got := text
		for _, e := range edits {
			if e.End > len(got) {
				t.Fatalf("EditsBetween(%d): edit %+v past the end of %q", since, e, got)
			}
			// The new text of each edit is not logged; only lengths are. Fill
			// with the current text's bytes where the lengths allow checking.
			got = got[:e.Start] + strings.Repeat("?", e.NewLen) + got[e.End:]
		}
		if len(got) != len(cur.Text()) {
			t.Errorf("EditsBetween(%d) replayed to %d bytes, want %d (%q)", since, len(got), len(cur.Text()), cur.Text())
		}
	}
	if edits, ok := s.EditsBetween(uri, 4, 4); !ok || len(edits) != 0 {
		t.Errorf("EditsBetween(current) = %v, %v; want none, true", edits, ok)
	}
	// Up to a version older than the current one: the edits after it
	// are not included (a result computed for version 3 moves to 3 only).
	if edits, ok := s.EditsBetween(uri, 1, 3); !ok || len(edits) != 3 {
		t.Errorf("EditsBetween(1, 3) = %v, %v; want the 3 edits of versions 2 and 3", edits, ok)
	}
	if _, ok := s.EditsBetween(uri, 1, 7); ok {
		t.Error("EditsBetween up to an unknown version reported true")
	}
	if _, ok := s.EditsBetween(uri, 99, 4); ok {
		t.Error("EditsBetween(unknown version) reported true")
	}
	s.Open(uri, 5, "reopened")
	if _, ok := s.EditsBetween(uri, 2, 5); ok {
		t.Error("EditsSince reported edits from before a reopen")
	}
}
