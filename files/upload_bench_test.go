package files_test

import (
	"bytes"
	"crypto/rand"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentui/agentui/files"
	"github.com/agentui/agentui/files/filestest"
)

// BenchmarkUpload: a 5 MiB image uploaded through the upload route into a
// directory store, in process: MB/s is its throughput, B/op the memory
// one upload takes, which stays far below the file's size (the upload
// streams to disk while it is hashed; it is never held whole). Each op is
// a file of other bytes (no two are one file).
func BenchmarkUpload(b *testing.B) {
	d, err := files.NewDir(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	h, err := files.NewHandler(d, bytes.Repeat([]byte("k"), 32), func(*http.Request) (string, error) { return "s", nil },
		files.WithMaxFiles(1<<30))
	if err != nil {
		b.Fatal(err)
	}
	upload := h.UploadHandler()
	img := append(bytes.Clone(filestest.PNG), make([]byte, 5<<20)...)
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	fw, _ := mw.CreateFormFile("file", "big.png")
	at := form.Len() + len(filestest.PNG) // where the random bytes start
	_, _ = fw.Write(img)
	_ = mw.Close()
	body := form.Bytes()
	b.SetBytes(int64(len(img)))
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		_, _ = rand.Read(body[at : at+64]) // another file each time
		b.StartTimer()
		req := httptest.NewRequest(http.MethodPost, "/api/files", bytes.NewReader(body))
		req.Header.Set("Content-Type", mw.FormDataContentType())
		w := httptest.NewRecorder()
		upload.ServeHTTP(w, req)
		if w.Code != http.StatusCreated {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
		_, _ = io.Copy(io.Discard, w.Body)
	}
}
