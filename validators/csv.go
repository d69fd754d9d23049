package validators

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strings"
)

// checkCSV accepts RFC 4180 CSV with at least one record and the same
// number of fields in every record.
func checkCSV(content string) error {
	if e := frame(content, kindCSV); e != nil {
		return e
	}
	if e := markdownTable(content); e != nil {
		return e
	}
	r := csv.NewReader(strings.NewReader(content))
	r.ReuseRecord = true
	want, wantLine := 0, 0
	for n := 0; ; n++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			if n == 0 {
				return &Error{Msg: "the answer has no CSV records: submit the CSV rows"}
			}
			return nil
		}
		if n == 0 && err == nil {
			want = len(rec)
			wantLine, _ = r.FieldPos(0)
		}
		if err != nil {
			return csvError(content, err, rec, want, wantLine)
		}
	}
}

// csvError positions and words an encoding/csv error.
func csvError(content string, err error, rec []string, want, wantLine int) *Error {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return &Error{Msg: err.Error()}
	}
	switch {
	case errors.Is(pe.Err, csv.ErrFieldCount):
		return &Error{Line: pe.StartLine, Msg: fmt.Sprintf("this record has %d %s, but the first record (line %d) has %d: every record must have the same number of fields (quote a field that contains a comma)",
			len(rec), plural(len(rec), "field", "fields"), wantLine, want)}
	case errors.Is(pe.Err, csv.ErrQuote):
		if pe.Line > pe.StartLine || pe.Column > len(lineAt(content, pe.Line)) {
			return &Error{Line: pe.StartLine, Msg: "a quoted field opened on this line is never closed: was the answer cut off? Close the quote"}
		}
		return &Error{Line: pe.Line, Column: pe.Column, Msg: `a quote (") is misplaced: quote the whole field ("like this") and double any quote inside it ("")`}
	case errors.Is(pe.Err, csv.ErrBareQuote):
		return &Error{Line: pe.Line, Column: pe.Column, Msg: `a quote (") appears inside a field that is not quoted: quote the whole field ("like this") and double any quote inside it ("")`}
	}
	return &Error{Line: pe.Line, Column: pe.Column, Msg: pe.Err.Error()}
}

// markdownTable recognises a Markdown table given where CSV was asked.
func markdownTable(content string) *Error {
	n1, l1, _, l2 := firstLines(content)
	if strings.HasPrefix(l1, "|") && strings.HasPrefix(l2, "|") && strings.Trim(l2, "|-: ") == "" {
		return &Error{Line: n1, Msg: "this is a Markdown table, but the answer must be CSV: submit the rows as comma-separated values, without | and ---"}
	}
	return nil
}

// lineAt returns content's line n (1-based), or "".
func lineAt(content string, n int) string {
	var out string
	lines(content, func(i int, line string) bool {
		if i == n {
			out = line
			return false
		}
		return true
	})
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// parseCSV reads every record, letting records differ in length: a script
// that parses part of an answer decides what it needs.
func parseCSV(content string) ([][]string, *Error) {
	r := csv.NewReader(strings.NewReader(content))
	r.FieldsPerRecord = -1
	var rows [][]string
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, csvError(content, err, rec, 0, 0)
		}
		rows = append(rows, rec)
	}
}
