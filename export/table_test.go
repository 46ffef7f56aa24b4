package export

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"testing"
	"unsafe"

	"github.com/parquet-go/parquet-go"
)

// fill sets every column of the row at v from seed: distinct strings,
// numbers and booleans, a null in about a third of the nullable columns,
// an empty string now and then, and the odd NaN or infinity.
func fill(v reflect.Value, seed int) {
	n := 0
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		for i := range v.NumField() {
			f, sf := v.Field(i), v.Type().Field(i)
			if sf.Anonymous {
				walk(f)
				continue
			}
			n++
			k := seed*131 + n*7
			if f.Kind() == reflect.Pointer {
				if k%3 == 0 {
					f.SetZero()
					continue
				}
				f.Set(reflect.New(f.Type().Elem()))
				f = f.Elem()
			}
			switch f.Kind() {
			case reflect.String:
				if k%11 != 0 {
					f.SetString(fmt.Sprintf("%s-%d", sf.Name, k%97))
				} else {
					f.SetString("")
				}
			case reflect.Int64:
				f.SetInt(int64(k%1000 - 500))
			case reflect.Float64:
				x := float64(k%1000) / 7
				switch k % 53 {
				case 0:
					x = math.NaN()
				case 1:
					x = math.Inf(-1)
				}
				f.SetFloat(x)
			case reflect.Bool:
				f.SetBool(k%2 == 0)
			}
		}
	}
	walk(v)
}

// TestFieldsReadTheRow: the offsets the tables read rows through give
// what reflection gives, for every column of every table, nulls included.
func TestFieldsReadTheRow(t *testing.T) {
	for _, row := range []any{&RoundRow{}, &TrialRow{}, &AttemptRow{}, &TaskRow{}} {
		v := reflect.ValueOf(row).Elem()
		fill(v, 3)
		fields := fieldsOf(v.Type())
		p := v.Addr().UnsafePointer()
		var flat []reflect.Value // the leaves in file order, as reflection walks them
		var walk func(v reflect.Value)
		walk = func(v reflect.Value) {
			for i := range v.NumField() {
				if v.Type().Field(i).Anonymous {
					walk(v.Field(i))
				} else {
					flat = append(flat, v.Field(i))
				}
			}
		}
		walk(v)
		if len(flat) != len(fields) {
			t.Fatalf("%s: %d fields, %d columns", v.Type(), len(flat), len(fields))
		}
		for i := range fields {
			f, want := &fields[i], flat[i]
			vals := f.appendValues(nil, p, 1, 0)
			got := vals[0]
			if want.Kind() == reflect.Pointer {
				if want.IsNil() {
					if f.at(p) != nil || !got.IsNull() || got.DefinitionLevel() != 0 {
						t.Errorf("%s.%s: null read as %v", v.Type(), f.Name, got)
					}
					continue
				}
				if got.DefinitionLevel() != 1 {
					t.Errorf("%s.%s: definition level %d, want 1", v.Type(), f.Name, got.DefinitionLevel())
				}
				want = want.Elem()
			}
			var same bool
			switch f.kind {
			case kString:
				s, ok := f.str(p)
				same = ok && s == want.String() && string(got.ByteArray()) == want.String()
			case kInt:
				same = got.Int64() == want.Int()
			case kFloat:
				same = math.Float64bits(got.Double()) == math.Float64bits(want.Float())
			case kBool:
				same = got.Boolean() == want.Bool()
			}
			if !same {
				t.Errorf("%s.%s: read %v, want %v", v.Type(), f.Name, got, want)
			}
		}
	}
}

// TestParquetSameAsRowWriter: the column-by-column writing gives the
// bytes parquet-go's own row writer gives for the same rows, batches and
// row groups: the same pages, values, nulls and statistics.
func TestParquetSameAsRowWriter(t *testing.T) {
	t.Run("attempts", func(t *testing.T) { sameAsRowWriter[AttemptRow](t, 2*rowsPerGroup+777) })
	t.Run("trials", func(t *testing.T) { sameAsRowWriter[TrialRow](t, rowsPerGroup+5) })
	t.Run("tasks", func(t *testing.T) { sameAsRowWriter[TaskRow](t, 1000) })
	t.Run("rounds", func(t *testing.T) { sameAsRowWriter[RoundRow](t, 1) })
}

func sameAsRowWriter[T any](t *testing.T, n int) {
	rows := make([]T, n)
	for i := range rows {
		fill(reflect.ValueOf(&rows[i]).Elem(), i)
	}
	meta := map[string]string{MetaTable: "test", MetaTpctlVersion: "v0.0.0-test"}

	var got bytes.Buffer
	tb := newTable[T](&got, Parquet, &gate{batch: func([]byte) bool { return false }}, "test", "row", func() string { return "" }, meta)
	for i := range rows {
		if err := tb.write(&rows[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := tb.close(); err != nil {
		t.Fatal(err)
	}

	// The row writer, fed as run fed it: batches, a row group every
	// rowsPerGroup rows.
	var want bytes.Buffer
	pw := parquet.NewGenericWriter[T](&want, parquetOptions(meta)...)
	inRG := 0
	for lo := 0; lo < n; lo += batch {
		b := rows[lo:min(lo+batch, n)]
		if _, err := pw.Write(b); err != nil {
			t.Fatal(err)
		}
		if inRG += len(b); inRG >= rowsPerGroup {
			inRG = 0
			if err := pw.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("%d rows: the column writer gives %d bytes, the row writer %d, not the same", n, got.Len(), want.Len())
	}
	// And the file reads back as the rows.
	back, err := parquet.Read[T](bytes.NewReader(got.Bytes()), int64(got.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != n {
		t.Fatalf("read %d rows back, wrote %d", len(back), n)
	}
}

// BenchmarkParquetValues builds the attempts table's Parquet values of a
// batch of rows, every column, as writeColumns does.
func BenchmarkParquetValues(b *testing.B) {
	rows := make([]AttemptRow, batch)
	for i := range rows {
		fill(reflect.ValueOf(&rows[i]).Elem(), i)
	}
	fields := fieldsOf(reflect.TypeFor[AttemptRow]())
	vals := make([]parquet.Value, 0, rowsPerWrite)
	size := unsafe.Sizeof(rows[0])
	for b.Loop() {
		for i := range fields {
			for lo := 0; lo < len(rows); lo += rowsPerWrite {
				vals = fields[i].appendValues(vals[:0], unsafe.Pointer(&rows[lo]), rowsPerWrite, size)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(rows)*len(fields)), "ns/value")
}
