package ui

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"
	"golang.org/x/term"
)

// Streams is the I/O of one command invocation.
type Streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	// rawOut and rawErr are the streams before Filter (a pager writes to
	// the terminal itself; its input passes the filter).
	rawOut, rawErr io.Writer
	wrap           func(io.Writer) io.Writer

	stdoutTTY bool
	stderrTTY bool
	color     bool
	width     int
}

// System returns the process's streams, detecting terminals, the width
// and colour (see ColorFor).
func System() *Streams {
	s := &Streams{
		In:        os.Stdin,
		Out:       os.Stdout,
		ErrOut:    os.Stderr,
		stdoutTTY: term.IsTerminal(int(os.Stdout.Fd())),
		stderrTTY: term.IsTerminal(int(os.Stderr.Fd())),
	}
	s.rawOut, s.rawErr = s.Out, s.ErrOut
	s.color = ColorFor(ColorAuto, s.stdoutTTY, os.Getenv)
	s.width = widthFor(os.Getenv, func() int {
		if !s.stdoutTTY {
			return 0
		}
		w, _, err := term.GetSize(int(os.Stdout.Fd()))
		if err != nil {
			return 0
		}
		return w
	})
	return s
}

// Colour modes of --color.
const (
	ColorAuto   = "auto"
	ColorAlways = "always"
	ColorNever  = "never"
)

// ColorFor decides colour for a stdout that is (or is not) a terminal:
// --color=always and --color=never win; under auto, a non-empty NO_COLOR
// (https://no-color.org; NO_COLOR= set but empty does not count) or
// TERM=dumb turn it off, CLICOLOR_FORCE (non-empty, not "0") turns it on
// off a terminal too, and otherwise colour follows the terminal.
func ColorFor(mode string, tty bool, getenv func(string) string) bool {
	switch mode {
	case ColorAlways:
		return true
	case ColorNever:
		return false
	}
	if getenv("NO_COLOR") != "" {
		return false
	}
	if f := getenv("CLICOLOR_FORCE"); f != "" && f != "0" {
		return true
	}
	return tty && getenv("TERM") != "dumb"
}

// widthFor is $COLUMNS when it is a positive number, else the terminal's
// width (0 when stdout is not one: no limit).
func widthFor(getenv func(string) string, terminal func() int) int {
	if n, err := strconv.Atoi(strings.TrimSpace(getenv("COLUMNS"))); err == nil && n > 0 {
		return n
	}
	return terminal()
}

// Test returns streams backed by buffers: not a terminal, no colour, no
// width limit.
func Test() (s *Streams, in, out, errOut *bytes.Buffer) {
	in, out, errOut = &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	s = &Streams{In: in, Out: out, ErrOut: errOut}
	s.rawOut, s.rawErr = out, errOut
	return s, in, out, errOut
}

// Filter passes standard output and standard error through wrap (tpctl's
// outgoing-text gate masks known secrets there); terminal detection and
// colour are unchanged.
func (s *Streams) Filter(wrap func(io.Writer) io.Writer) {
	s.wrap = wrap
	s.Out, s.ErrOut = wrap(s.Out), wrap(s.ErrOut)
}

// IsStdoutTTY reports whether standard output is a terminal.
func (s *Streams) IsStdoutTTY() bool { return s.stdoutTTY }

// IsStderrTTY reports whether standard error is a terminal; progress is
// only drawn there.
func (s *Streams) IsStderrTTY() bool { return s.stderrTTY }

// SetTTY overrides terminal detection (tests, forced modes).
func (s *Streams) SetTTY(stdout, stderr bool) { s.stdoutTTY, s.stderrTTY = stdout, stderr }

// ColorEnabled reports whether styles may emit escape sequences.
func (s *Streams) ColorEnabled() bool { return s.color }

// SetColorEnabled forces colour on or off (--color, --no-color, tests).
func (s *Streams) SetColorEnabled(on bool) { s.color = on }

// SetColorMode applies --color (auto, always or never) with the
// environment, as System does for auto.
func (s *Streams) SetColorMode(mode string) {
	s.color = ColorFor(mode, s.stdoutTTY, os.Getenv)
}

// Width is the width text should fit, in terminal cells; 0 means no
// limit (stdout is not a terminal and COLUMNS is unset).
func (s *Streams) Width() int { return s.width }

// SetWidth overrides the width (tests).
func (s *Streams) SetWidth(n int) { s.width = n }

// JSON writes v to standard output by the JSON rule (see JSON).
func (s *Streams) JSON(v any) error { return JSON(s.Out, v) }

// Styles is the small palette tpctl uses for human output.
type Styles struct {
	Bold    lipgloss.Style
	Faint   lipgloss.Style
	OK      lipgloss.Style
	Warn    lipgloss.Style
	Error   lipgloss.Style
	Heading lipgloss.Style
}

// Styles returns the palette for stdout; all styles are plain when colour
// is disabled.
func (s *Streams) Styles() Styles {
	r := lipgloss.NewRenderer(s.Out)
	if s.color {
		r.SetColorProfile(termenv.ANSI256)
	} else {
		r.SetColorProfile(termenv.Ascii)
	}
	return Styles{
		Bold:    r.NewStyle().Bold(true),
		Faint:   r.NewStyle().Faint(true),
		OK:      r.NewStyle().Foreground(lipgloss.Color("2")),
		Warn:    r.NewStyle().Foreground(lipgloss.Color("3")),
		Error:   r.NewStyle().Foreground(lipgloss.Color("1")).Bold(true),
		Heading: r.NewStyle().Bold(true).Underline(true),
	}
}

// lineBufferSize is how much a LineBuffer collects before passing whole
// lines on.
const lineBufferSize = 4096

// LineBuffer is a buffered writer that passes text on to its writer in
// whole lines only (and the rest at Flush). The outgoing-text gate masks
// each Write it sees, so a buffer that cut a line at a fixed size, as
// bufio.Writer does, could cut a secret quoted in a long listing in two
// and pass both halves unmasked.
type LineBuffer struct {
	w   io.Writer
	buf []byte
	err error
}

// NewLineBuffer returns a LineBuffer writing to w.
func NewLineBuffer(w io.Writer) *LineBuffer {
	return &LineBuffer{w: w, buf: make([]byte, 0, 2*lineBufferSize)}
}

// Write collects p, passing on the whole lines collected once there are
// enough of them.
func (b *LineBuffer) Write(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	b.buf = append(b.buf, p...)
	if len(b.buf) >= lineBufferSize {
		if i := bytes.LastIndexByte(b.buf, '\n'); i >= 0 {
			b.emit(i + 1)
		}
	}
	return len(p), b.err
}

// Flush passes on everything collected.
func (b *LineBuffer) Flush() error {
	if b.err == nil && len(b.buf) > 0 {
		b.emit(len(b.buf))
	}
	return b.err
}

func (b *LineBuffer) emit(n int) {
	_, b.err = b.w.Write(b.buf[:n])
	b.buf = append(b.buf[:0], b.buf[n:]...)
}

// Unfiltered is standard output before Filter (and before --quiet), for
// output a command has already checked whole with the same secret
// scanner, so that it is not scanned a second time on its way out:
// tpctl report --out - (the page is refused, unwritten, if the scan finds
// anything).
func (s *Streams) Unfiltered() io.Writer {
	if s.rawOut == nil {
		return s.Out
	}
	return s.rawOut
}
