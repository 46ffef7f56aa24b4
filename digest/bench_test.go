package digest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// makeTree writes dirs×files files of size bytes under root.
func makeTree(b *testing.B, root string, dirs, files, size int) int64 {
	b.Helper()
	buf := make([]byte, size)
	for i := range buf {
		buf[i] = byte(i)
	}
	var total int64
	for d := 0; d < dirs; d++ {
		dir := filepath.Join(root, fmt.Sprintf("d%03d", d), "sub")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := 0; f < files; f++ {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.txt", f)), buf, 0o644); err != nil {
				b.Fatal(err)
			}
			total += int64(size)
		}
	}
	return total
}

// BenchmarkDir hashes a generated tree of 2,000 files of 4 KiB (8 MiB).
func BenchmarkDir(b *testing.B) {
	root := b.TempDir()
	total := makeTree(b, root, 40, 50, 4096)
	b.SetBytes(total)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := Dir(root, DirOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHarborTask hashes a task folder with 500 files under tests/.
func BenchmarkHarborTask(b *testing.B) {
	root := b.TempDir()
	total := makeTree(b, filepath.Join(root, "tests"), 10, 50, 4096)
	b.SetBytes(total)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := HarborTask(root); err != nil {
			b.Fatal(err)
		}
	}
}
