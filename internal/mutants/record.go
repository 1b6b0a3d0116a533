package mutants

import (
	"fmt"
	"reflect"
	"time"

	"github.com/termlab/termlab/internal/evidence"
)

// clone deep-copies a record, so each mutant starts from the reference.
// Raw bytes (json.RawMessage) are shared: no operator writes into them.
func clone(rec *evidence.Record) *evidence.Record {
	out := deepCopy(reflect.ValueOf(rec))
	return out.Interface().(*evidence.Record)
}

var timeType = reflect.TypeFor[time.Time]()

func deepCopy(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(deepCopy(v.Elem()))
		return p
	case reflect.Slice:
		if v.IsNil() || v.Type().Elem().Kind() == reflect.Uint8 {
			return v
		}
		s := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			s.Index(i).Set(deepCopy(v.Index(i)))
		}
		return s
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		m := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			m.SetMapIndex(it.Key(), deepCopy(it.Value()))
		}
		return m
	case reflect.Struct:
		if v.Type() == timeType {
			return v
		}
		s := reflect.New(v.Type()).Elem()
		s.Set(v) // unexported fields and plain values as they are
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				s.Field(i).Set(deepCopy(v.Field(i)))
			}
		}
		return s
	default:
		return v
	}
}

// timeField is one recorded time of a record, by where it is.
type timeField struct {
	path string
	at   *time.Time
}

// timeFields lists every non-zero time of the record (watch events, crictl
// looks, workload log lines, actions, steps, ledger entries …) in a fixed
// order: the record's own.
func timeFields(rec *evidence.Record) []timeField {
	var out []timeField
	walkTimes(reflect.ValueOf(rec).Elem(), "", &out)
	return out
}

func walkTimes(v reflect.Value, path string, out *[]timeField) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			walkTimes(v.Elem(), path, out)
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := range v.Len() {
			walkTimes(v.Index(i), fmt.Sprintf("%s[%d]", path, i), out)
		}
	case reflect.Struct:
		if v.Type() == timeType {
			if t := v.Addr().Interface().(*time.Time); !t.IsZero() {
				*out = append(*out, timeField{path: path, at: t})
			}
			return
		}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			p := path
			if !f.Anonymous {
				p = join(path, f.Name)
			}
			walkTimes(v.Field(i), p, out)
		}
	}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
