package configs

import (
	"io"
	"reflect"
	"strings"
	"testing"
	"text/template"
	"time"
)

// FuzzWebhookTemplate: a template the config check passes does not fail
// with "can't evaluate field" on a record whose every field is set (tags,
// headers and lists not empty): such a template fails on every record
// of its kind, each dead-lettered.
func FuzzWebhookTemplate(f *testing.F) {
	for _, s := range []string{
		`{{json .Event.Type}} {{.Event.Tags.site}} {{index .Event.Tags "site"}}`,
		`{{.Log.Message}} {{.Metric.Measurement}} {{.Schema}}`,
		`{{.Record.Topic}} {{.Record.Key}} {{json .Record.Value}} {{range .Record.Headers}}{{.Key}}={{.Value}}{{end}}`,
		`{{with .Event}}{{.Device}}{{end}} {{$.Record.Offset}} {{.Log.Time.Unix}} {{.Record.Timestamp.Year}}`,
		`{{range $k, $v := .Metric.Fields}}{{$k}}={{$v}}{{end}}`,
		`{{if .Event.Type}}{{.Event.Typ}}{{end}}`,
		`{{range .Record.Headers}}{{.Kye}}{{end}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tmpl, err := template.New("body").Funcs(WebhookTemplateFuncs()).Parse(s)
		if err != nil || tryWebhookTemplate(tmpl) != nil {
			return
		}
		var d WebhookTemplateData
		fill(reflect.ValueOf(&d).Elem(), 0)
		if err := tmpl.Execute(io.Discard, &d); err != nil && strings.Contains(err.Error(), "can't evaluate field") {
			t.Fatalf("check passed %q, which fails on a full record: %v", s, err)
		}
	})
}

// fill sets every field of v: pointers to values, one-element lists,
// one-entry maps, so that no branch of a template is skipped for want of
// data.
func fill(v reflect.Value, depth int) {
	if depth > 6 || !v.CanSet() {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), depth+1)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Unix(1700000000, 0).UTC()))
			return
		}
		for i := range v.NumField() {
			fill(v.Field(i), depth+1)
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), depth+1)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, depth+1)
		fill(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.Interface:
		v.Set(reflect.ValueOf("x"))
	}
}
