package export

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/klauspost/compress/s2"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/snappy"
)

// Format is an export file format.
type Format string

// The formats tpctl export writes.
const (
	Parquet Format = "parquet"
	CSV     Format = "csv"
	JSONL   Format = "jsonl"
)

// Formats lists the formats in the order help shows them.
var Formats = []Format{Parquet, CSV, JSONL}

// ParseFormat returns the Format named s.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("--format %q is not one of parquet, csv, jsonl", s)
}

// Column describes one column of an export table, as docs/export.md lists
// it. Type is the DuckDB type a reader gets: VARCHAR, BIGINT, DOUBLE or
// BOOLEAN.
type Column struct {
	Name     string
	Type     string
	Nullable bool
	Doc      string
}

type kind int

const (
	kString kind = iota
	kInt
	kFloat
	kBool
)

type field struct {
	Column
	// offset is the field's byte offset in the row struct, through
	// embedded ones (which are values, never pointers): rows are read
	// through it rather than through reflection, which cost more than
	// the encoding at a million rows.
	offset uintptr
	kind   kind
	ptr    bool
}

// fieldsOf lists the columns of a row struct in file order; an embedded
// struct's fields are columns in its place, as parquet-go flattens them.
func fieldsOf(t reflect.Type) []field {
	return appendFields(nil, t, 0)
}

func appendFields(fs []field, t reflect.Type, base uintptr) []field {
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			if sf.Type.Kind() != reflect.Struct {
				panic(fmt.Sprintf("export: embedded field %s is not a struct", sf.Name))
			}
			fs = appendFields(fs, sf.Type, base+sf.Offset)
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("parquet"), ",")
		ft := sf.Type
		f := field{Column: Column{Name: name, Doc: sf.Tag.Get("doc")}, offset: base + sf.Offset}
		if ft.Kind() == reflect.Pointer {
			f.ptr, f.Nullable, ft = true, true, ft.Elem()
		}
		switch ft.Kind() {
		case reflect.String:
			f.kind, f.Type = kString, "VARCHAR"
		case reflect.Int64:
			f.kind, f.Type = kInt, "BIGINT"
		case reflect.Float64:
			f.kind, f.Type = kFloat, "DOUBLE"
		case reflect.Bool:
			f.kind, f.Type = kBool, "BOOLEAN"
		default:
			panic(fmt.Sprintf("export: column %s has unsupported type %s", name, sf.Type))
		}
		fs = append(fs, f)
	}
	return fs
}

// at is the address of the field's value in the row at p, nil for a
// null. p must point to a row of the struct type the field was listed
// from (table[T] keeps them together).
func (f *field) at(p unsafe.Pointer) unsafe.Pointer {
	a := unsafe.Add(p, f.offset)
	if f.ptr {
		return *(*unsafe.Pointer)(a)
	}
	return a
}

// str is a string field's value; ok is false for a null.
func (f *field) str(p unsafe.Pointer) (s string, ok bool) {
	a := f.at(p)
	if a == nil {
		return "", false
	}
	return *(*string)(a), true
}

// Table names, the files of one round's partition.
const (
	TableRounds   = "rounds"
	TableTrials   = "trials"
	TableAttempts = "attempts"
	TableTasks    = "tasks"
)

// Tables lists the table names in the order of docs/export.md.
var Tables = []string{TableRounds, TableTrials, TableAttempts, TableTasks}

// Columns returns the columns of a table (one of Tables), in file order.
func Columns(table string) []Column {
	var t reflect.Type
	switch table {
	case TableRounds:
		t = reflect.TypeFor[RoundRow]()
	case TableTrials:
		t = reflect.TypeFor[TrialRow]()
	case TableAttempts:
		t = reflect.TypeFor[AttemptRow]()
	case TableTasks:
		t = reflect.TypeFor[TaskRow]()
	default:
		return nil
	}
	var cs []Column
	for _, f := range fieldsOf(t) {
		cs = append(cs, f.Column)
	}
	return cs
}

// DuckDBColumns is the columns argument of DuckDB's read_csv and read_json
// for a table: {'name': 'TYPE', …}. Parquet files carry their types; text
// formats do not, and a reader that guesses them takes a column of digests
// that happen to be all digits for numbers, or an all-null column for
// text or JSON.
func DuckDBColumns(table string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, c := range Columns(table) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "'%s': '%s'", c.Name, c.Type)
	}
	b.WriteByte('}')
	return b.String()
}

// rowsPerGroup bounds a Parquet row group, so the pages the writer keeps
// in memory before a group is written do not grow with the round.
const rowsPerGroup = 16 << 10

// batch is how many rows are handed to the Parquet writer at once.
const batch = 512

// gate is the outgoing-text gate of one round's tables. A row's new
// strings are joined by NUL bytes and scanned together, and so are the
// rows of a batch, up to gateBatch bytes, in one scan; only when that
// finds something are its rows scanned one by one, and the values of a
// row that finds something checked one by one, which locates the
// finding (a match only across two values is no secret in either). NUL,
// not a newline: the gate also scans text with its line breaks removed,
// for a secret folded across lines, which would scan every batch twice;
// a value's own line breaks are still in the batch, and no detector
// matches a NUL where it would not match the end of a value.
//
// The batch is scanned before any table hands a row to its file (flush),
// so nothing is written before it passed; and before any other error is
// returned, so the error an export reports is the first in row order.
type gate struct {
	// check is the check of one value of a row of a table, whose name
	// is its kind ("trial", "task", "round") and key.
	check func(table, kind, key, column, value string) error
	batch func(text []byte) bool // reports whether text may carry a secret
	// passed is what passed per column name, shared by the tables of one
	// round: a value repeated from one row to the next, or from an
	// attempt to its trial, is not scanned again.
	passed map[string]*passed
	joined []byte        // the batch's new strings, for one scan
	fresh  []freshString // the same, one by one
	rows   []gatedRow    // the rows they are of, in order
}

// gateBatch is about how many bytes of new strings are scanned at once:
// one scan of a few kilobytes costs less than one per row (the
// prefilter's and the expressions' set-up is per scan), and the rows
// wait in memory until it ran.
const gateBatch = 4 << 10

// freshString is a string of a row that the gate checks: its column and
// its value.
type freshString struct {
	column string
	value  string
}

// gatedRow is a row with new strings in the gate's batch: its table and
// name, and where its strings end in joined and fresh.
type gatedRow struct {
	table, kind, key string
	joined, fresh    int
}

// flush scans the batch and empties it; the error is the first value's,
// in row order, that carries a secret.
func (g *gate) flush() error {
	if len(g.rows) == 0 {
		return nil
	}
	defer func() {
		g.joined, g.fresh, g.rows = g.joined[:0], g.fresh[:0], g.rows[:0]
	}()
	if !g.batch(g.joined) {
		return nil
	}
	j, f := 0, 0
	for _, r := range g.rows {
		if g.batch(g.joined[j:r.joined]) {
			for _, fs := range g.fresh[f:r.fresh] {
				if err := g.check(r.table, r.kind, r.key, fs.column, fs.value); err != nil {
					return err
				}
			}
		}
		j, f = r.joined, r.fresh
	}
	return nil
}

// passed is the values of one column the gate passed: the last one, and
// a few recent short ones (statuses, reasons, exception types alternate
// from row to row). A value that passed alone passes anywhere, so this
// only decides what is scanned, never what is found; the set is bounded
// and replaced in order, so the same rows scan the same strings.
type passed struct {
	last  string
	words [8]string
	next  int
}

// maxWord is the longest value passed keeps among its words.
const maxWord = 40

func (p *passed) has(s string) bool {
	if s == p.last {
		return true
	}
	if len(s) > maxWord {
		return false
	}
	for _, w := range p.words {
		if w == s {
			return true
		}
	}
	return false
}

func (p *passed) add(s string) {
	// Looked up before s becomes the last value, or it would always be
	// found and never kept among the words.
	if len(s) <= maxWord && !p.has(s) {
		p.words[p.next] = s
		p.next = (p.next + 1) % len(p.words)
	}
	p.last = s
}

// table writes rows of one type to w in one format.
type table[T any] struct {
	format Format
	w      *bufio.Writer
	fields []field
	strs   []int // the fields that are strings, which the gate checks
	gate   *gate
	name   string        // the table's, for the gate's message
	kind   string        // what a row is, for the same: trial, task, round
	key    func() string // the row being written's name of that kind
	passed []*passed     // per field: the gate's for its column name
	buf    []byte
	pw     *parquet.GenericWriter[T]
	cols   []int           // per field: its Parquet column's index
	vals   []parquet.Value // one column of a batch, run's
	rows   []T
	inRG   int
	n      int64
	// The Parquet encoding runs on a goroutine of its own (run), fed
	// batches of rows through full and handing them back through free, so
	// it overlaps the reading and checking of the next rows.
	full   chan []T
	free   chan []T
	ended  chan error
	closed bool
}

// newTable writes the rows of table name to w; the strings of a row pass
// the gate g first (its batch), named by kind and key at the time the
// row is written.
func newTable[T any](w io.Writer, format Format, g *gate, name, kind string, key func() string, meta map[string]string) *table[T] {
	t := &table[T]{format: format, w: bufio.NewWriterSize(w, 64<<10), fields: fieldsOf(reflect.TypeFor[T]()), gate: g,
		name: name, kind: kind, key: key}
	if t.gate.passed == nil {
		t.gate.passed = map[string]*passed{}
	}
	t.passed = make([]*passed, len(t.fields))
	for i, f := range t.fields {
		if f.kind == kString {
			p := t.gate.passed[f.Name]
			if p == nil {
				p = &passed{}
				t.gate.passed[f.Name] = p
			}
			t.passed[i] = p
			t.strs = append(t.strs, i)
		}
	}
	switch format {
	case Parquet:
		t.pw = parquet.NewGenericWriter[T](t.w, parquetOptions(meta)...)
		t.cols = columnIndexes(t.pw.Schema(), t.fields)
		t.rows = make([]T, 0, batch)
		t.vals = make([]parquet.Value, 0, rowsPerWrite)
		t.full, t.free, t.ended = make(chan []T, 2), make(chan []T, 3), make(chan error, 1)
		go t.run()
	case CSV:
		for i, f := range t.fields {
			if i > 0 {
				t.buf = append(t.buf, ',')
			}
			t.buf = append(t.buf, f.Name...)
		}
		t.buf = append(t.buf, '\r', '\n')
	}
	return t
}

// parquetOptions are the Parquet writer's options for a file with the
// footer's key/value metadata meta.
func parquetOptions(meta map[string]string) []parquet.WriterOption {
	opts := []parquet.WriterOption{
		parquet.Compression(&fastSnappy{}),
		parquet.CreatedBy("tpctl", meta[MetaTpctlVersion], ""),
		parquet.MaxRowsPerRowGroup(rowsPerGroup),
	}
	for k, v := range meta {
		opts = append(opts, parquet.KeyValueMetadata(k, v))
	}
	return opts
}

// columnIndexes maps each field to its leaf column in schema, by name:
// parquet-go builds the schema from the same struct tags.
func columnIndexes(schema *parquet.Schema, fields []field) []int {
	at := map[string]int{}
	for i, path := range schema.Columns() {
		at[strings.Join(path, ".")] = i
	}
	cols := make([]int, len(fields))
	for i, f := range fields {
		c, ok := at[f.Name]
		if !ok {
			panic(fmt.Sprintf("export: column %s is not in the Parquet schema", f.Name))
		}
		cols[i] = c
	}
	return cols
}

// fastSnappy is the Snappy codec with the faster of the two
// Snappy-compatible block encoders parquet-go's dependency has: its
// default, the "better" one, spent a third of the Parquet encoding on
// pages that are mostly hex digests, which neither shrinks much. Any
// Snappy reader reads either; the bytes are as deterministic.
type fastSnappy struct{ snappy.Codec }

func (fastSnappy) Encode(dst, src []byte) ([]byte, error) { return s2.EncodeSnappy(dst, src), nil }

// write adds one row, its strings to the gate's batch. The row reaches
// the file only once the batch passed.
func (t *table[T]) write(row *T) error {
	p, g := unsafe.Pointer(row), t.gate
	// Only strings the gate has not recently passed in a column of that
	// name (of this table or another that shares the gate's passed: an
	// attempt's trial ID, then its trial's) are scanned. A string counts
	// as passed once in the batch: a batch with a secret is an error.
	fresh := len(g.fresh)
	for _, i := range t.strs {
		if s, ok := t.fields[i].str(p); ok && s != "" && !t.passed[i].has(s) {
			g.joined = append(append(g.joined, s...), 0)
			g.fresh = append(g.fresh, freshString{t.fields[i].Name, s})
			t.passed[i].add(s)
		}
	}
	if len(g.fresh) > fresh {
		g.rows = append(g.rows, gatedRow{table: t.name, kind: t.kind, key: t.key(), joined: len(g.joined), fresh: len(g.fresh)})
		if len(g.joined) >= gateBatch {
			if err := g.flush(); err != nil {
				return err
			}
		}
	}
	t.n++
	switch t.format {
	case Parquet:
		t.rows = append(t.rows, *row)
		if len(t.rows) == cap(t.rows) {
			return t.flushRows()
		}
		return nil
	case CSV:
		t.buf = appendCSV(t.buf, p, t.fields)
	default:
		t.buf = appendJSONL(t.buf, p, t.fields)
	}
	if len(t.buf) >= 32<<10 {
		if err := t.gate.flush(); err != nil {
			return err
		}
		_, err := t.w.Write(t.buf)
		t.buf = t.buf[:0]
		return err
	}
	return nil
}

// flushRows hands the batch of rows to run and takes an empty one.
func (t *table[T]) flushRows() error {
	if len(t.rows) == 0 {
		return nil
	}
	if err := t.gate.flush(); err != nil {
		return err
	}
	t.full <- t.rows
	select {
	case t.rows = <-t.free:
	default:
		t.rows = make([]T, 0, batch)
	}
	return nil
}

// run writes the batches to the Parquet writer, row groups of at most
// rowsPerGroup rows; after an error it only hands the batches back. Its
// error is sent on ended when full is closed.
func (t *table[T]) run() {
	var err error
	for rows := range t.full {
		if err == nil {
			err = t.writeColumns(rows)
			if t.inRG += len(rows); err == nil && t.inRG >= rowsPerGroup {
				t.inRG = 0
				err = t.pw.Flush()
			}
		}
		clear(rows)
		select {
		case t.free <- rows[:0]:
		default:
		}
	}
	t.ended <- err
}

// writeColumns hands a batch of rows to the Parquet writer one column
// at a time, as typed values: parquet-go's row writer walks each row's
// struct by reflection, one call per optional value. The values go in 64
// rows at a time, as that writer hands them to the columns, because a
// page is cut after the write that fills it: the pages, and so the
// bytes, are the same as the row writer's.
func (t *table[T]) writeColumns(rows []T) error {
	if len(rows) == 0 {
		return nil
	}
	cws := t.pw.ColumnWriters()
	size := unsafe.Sizeof(rows[0])
	for i := range t.fields {
		f, cw := &t.fields[i], cws[t.cols[i]]
		for lo := 0; lo < len(rows); lo += rowsPerWrite {
			n := min(rowsPerWrite, len(rows)-lo)
			t.vals = f.appendValues(t.vals[:0], unsafe.Pointer(&rows[lo]), n, size)
			if _, err := cw.WriteRowValues(t.vals); err != nil {
				return err
			}
		}
	}
	clear(t.vals[:cap(t.vals)]) // no pointers into rows that go back to be reused
	return nil
}

// rowsPerWrite is how many rows parquet-go's GenericWriter.Write hands
// its columns at once (maxRowsPerWrite in its writer.go).
const rowsPerWrite = 64

// appendValues appends the field of n rows, size bytes apart from the
// one at p, as Parquet values: a null has definition level 0, a value of
// a nullable column 1. A string's bytes are not copied: the column
// buffer copies them before WriteRowValues returns. One loop per kind
// and nullability, each small enough for its value's constructor to be
// inlined.
func (f *field) appendValues(vals []parquet.Value, p unsafe.Pointer, n int, size uintptr) []parquet.Value {
	p = unsafe.Add(p, f.offset)
	// at is the field of row r: inside the rows for every r < n (a
	// pointer one past them is never made).
	at := func(r int) unsafe.Pointer { return unsafe.Add(p, uintptr(r)*size) }
	if f.ptr {
		// The null is the zero Value; a value's definition level is 1.
		switch f.kind {
		case kString:
			for r := range n {
				var v parquet.Value
				if a := (*string)(*(*unsafe.Pointer)(at(r))); a != nil {
					v = parquet.ByteArrayValue(unsafe.Slice(unsafe.StringData(*a), len(*a)))
					v.SetDefinitionLevel(1)
				}
				vals = append(vals, v)
			}
		case kInt:
			for r := range n {
				var v parquet.Value
				if a := (*int64)(*(*unsafe.Pointer)(at(r))); a != nil {
					v = parquet.Int64Value(*a)
					v.SetDefinitionLevel(1)
				}
				vals = append(vals, v)
			}
		case kFloat:
			for r := range n {
				var v parquet.Value
				if a := (*float64)(*(*unsafe.Pointer)(at(r))); a != nil {
					v = parquet.DoubleValue(*a)
					v.SetDefinitionLevel(1)
				}
				vals = append(vals, v)
			}
		default:
			for r := range n {
				var v parquet.Value
				if a := (*bool)(*(*unsafe.Pointer)(at(r))); a != nil {
					v = parquet.BooleanValue(*a)
					v.SetDefinitionLevel(1)
				}
				vals = append(vals, v)
			}
		}
		return vals
	}
	switch f.kind {
	case kString:
		for r := range n {
			s := *(*string)(at(r))
			vals = append(vals, parquet.ByteArrayValue(unsafe.Slice(unsafe.StringData(s), len(s))))
		}
	case kInt:
		for r := range n {
			vals = append(vals, parquet.Int64Value(*(*int64)(at(r))))
		}
	case kFloat:
		for r := range n {
			vals = append(vals, parquet.DoubleValue(*(*float64)(at(r))))
		}
	default:
		for r := range n {
			vals = append(vals, parquet.BooleanValue(*(*bool)(at(r))))
		}
	}
	return vals
}

// stop ends run, if it runs, and returns its error.
func (t *table[T]) stop() error {
	if t.full == nil || t.closed {
		return nil
	}
	t.closed = true
	close(t.full)
	return <-t.ended
}

// close finishes the file (the Parquet footer) and flushes w.
func (t *table[T]) close() error {
	if err := t.gate.flush(); err != nil {
		return err
	}
	if t.format == Parquet {
		if err := t.flushRows(); err != nil {
			return err
		}
		if err := t.stop(); err != nil {
			return err
		}
		if err := t.pw.Close(); err != nil {
			return err
		}
	} else if _, err := t.w.Write(t.buf); err != nil {
		return err
	}
	return t.w.Flush()
}

// appendCSV writes one row: a null is an empty field, an empty string a
// quoted empty field (""), so readers such as DuckDB tell them apart.
func appendCSV(b []byte, p unsafe.Pointer, fields []field) []byte {
	for i := range fields {
		f := &fields[i]
		if i > 0 {
			b = append(b, ',')
		}
		a := f.at(p)
		if a == nil {
			continue
		}
		switch f.kind {
		case kString:
			s := *(*string)(a)
			if s == "" || strings.ContainsAny(s, ",\"\r\n") || s[0] == ' ' || s[len(s)-1] == ' ' {
				b = append(b, '"')
				b = append(b, strings.ReplaceAll(s, `"`, `""`)...)
				b = append(b, '"')
			} else {
				b = append(b, s...)
			}
		default:
			b = appendScalar(b, a, f.kind)
		}
	}
	return append(b, '\r', '\n')
}

// appendJSONL writes one row as a JSON object with every column, null
// where the value is.
func appendJSONL(b []byte, p unsafe.Pointer, fields []field) []byte {
	b = append(b, '{')
	for i := range fields {
		f := &fields[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, f.Name)
		b = append(b, ':')
		a := f.at(p)
		if a == nil {
			b = append(b, "null"...)
			continue
		}
		if f.kind == kString {
			b = appendJSONString(b, *(*string)(a))
		} else {
			b = appendScalar(b, a, f.kind)
		}
	}
	return append(b, '}', '\n')
}

// appendScalar writes an integer, a boolean, or a double that always has
// a decimal point or an exponent, so a reader that guesses column types
// from the text (DuckDB's read_csv and read_json, pandas) reads a DOUBLE
// column as one even when every value in it is whole.
func appendScalar(b []byte, a unsafe.Pointer, k kind) []byte {
	switch k {
	case kInt:
		return strconv.AppendInt(b, *(*int64)(a), 10)
	case kBool:
		return strconv.AppendBool(b, *(*bool)(a))
	}
	x := *(*float64)(a)
	if math.IsInf(x, 0) || math.IsNaN(x) {
		// The snapshot keeps only finite numbers; never write invalid JSON.
		return append(b, "null"...)
	}
	start := len(b)
	b = strconv.AppendFloat(b, x, 'g', -1, 64)
	for _, c := range b[start:] {
		if c == '.' || c == 'e' {
			return b
		}
	}
	return append(b, '.', '0')
}

const hexDigits = "0123456789abcdef"

// appendJSONString writes s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 replaced by U+FFFD, as
// encoding/json does (without its HTML escaping).
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
