package content

import (
	"encoding/json"
	"testing"

	"github.com/agentui/agentui/cmf"
)

func TestResultText(t *testing.T) {
	for _, tc := range []struct {
		content         string
		isError         bool
		plain, flagless string
	}{
		{`"sunny"`, false, "sunny", "sunny"},
		{`{"t":21}`, false, `{"t":21}`, `{"t":21}`},
		{`"no such city"`, true, "no such city", "Error: no such city"},
		{`{"code":404}`, true, `{"code":404}`, `Error: {"code":404}`},
		{`"line\nbreak \u00e9"`, false, "line\nbreak é", "line\nbreak é"},
	} {
		r := cmf.ToolResult{ToolCallID: "c1", Content: json.RawMessage(tc.content), IsError: tc.isError}
		if got := ResultText(r); got != tc.plain {
			t.Errorf("ResultText(%s) = %q, want %q", tc.content, got, tc.plain)
		}
		if got := ResultTextSayingError(r); got != tc.flagless {
			t.Errorf("ResultTextSayingError(%s, error %v) = %q, want %q", tc.content, tc.isError, got, tc.flagless)
		}
	}
}

func TestMedia(t *testing.T) {
	for _, tc := range []struct {
		src           cmf.MediaSource
		dataURL, name string
	}{
		{cmf.MediaSource{Type: cmf.SourceURL, Data: "https://example.com/a.png", MediaType: "image/png"}, "https://example.com/a.png", "https://example.com/a.png"},
		{cmf.MediaSource{Type: cmf.SourceBase64, Data: "iVBORw0K", MediaType: "image/png"}, "data:image/png;base64,iVBORw0K", "image/png"},
		{cmf.MediaSource{Type: cmf.SourceBase64, Data: "AAAA"}, "data:application/octet-stream;base64,AAAA", ""},
	} {
		if got := DataURL(tc.src); got != tc.dataURL {
			t.Errorf("DataURL(%+v) = %q, want %q", tc.src, got, tc.dataURL)
		}
		if got := MediaName(tc.src); got != tc.name {
			t.Errorf("MediaName(%+v) = %q, want %q", tc.src, got, tc.name)
		}
	}
}

func TestResourceText(t *testing.T) {
	text := "# Notes\nsome text"
	if got, ok := ResourceText(cmf.Resource{URI: "file:///notes.md", Content: &text}); !ok || got != "[resource file:///notes.md]\n# Notes\nsome text" {
		t.Errorf("ResourceText = %q, %v", got, ok)
	}
	if got, ok := ResourceText(cmf.Resource{URI: "file:///a.bin", Blob: []byte{1, 2}}); ok || got != "" {
		t.Errorf("a blob: ResourceText = %q, %v", got, ok)
	}
}
