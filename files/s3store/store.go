// Package s3store is a files.Store on an S3-compatible object store
// (AWS S3, or any server that speaks its API), for replicas that share
// their files. It is a module of its own: an application that keeps files
// in a directory does not build the AWS SDK.
//
// A file is one object, <prefix><scope hash>/<file id>, with its sniffed
// type as its Content-Type; an upload is spooled to a temporary file while
// it is hashed and sniffed, then put under its hash, once per scope.
package s3store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/agentui/agentui/files"
)

// Store is a files.Store in an S3 bucket.
type Store struct {
	client *s3.Client
	bucket string
	prefix string
}

var _ files.Store = (*Store)(nil)

// New returns a store of bucket's objects under prefix ("agentui-files/"
// when empty), through client.
func New(client *s3.Client, bucket, prefix string) *Store {
	if prefix == "" {
		prefix = "agentui-files/"
	}
	return &Store{client: client, bucket: bucket, prefix: prefix}
}

// scopeDir is scope's key prefix: its hash, so no scope names a key.
func (s *Store) scopeDir(scope string) string {
	sum := sha256.Sum256([]byte(scope))
	return s.prefix + hex.EncodeToString(sum[:16]) + "/"
}

func (s *Store) key(scope, id string) string { return s.scopeDir(scope) + id }

// Put spools r to a temporary file while hashing and sniffing it, then
// puts it under its hash unless the scope has it already.
func (s *Store) Put(ctx context.Context, scope string, r io.Reader, max int64) (files.File, error) {
	tmp, err := os.CreateTemp("", "agentui-upload-*")
	if err != nil {
		return files.File{}, fmt.Errorf("s3store: %w", err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	h := sha256.New()
	head := make([]byte, 0, 512)
	n, err := io.Copy(io.MultiWriter(tmp, h, headWriter{&head}), io.LimitReader(r, max+1))
	switch {
	case err != nil:
		return files.File{}, fmt.Errorf("s3store: %w", err)
	case n > max:
		return files.File{}, files.ErrTooLarge
	}
	f := files.File{ID: "sha256-" + hex.EncodeToString(h.Sum(nil)), MediaType: files.Sniff(head), Size: n}
	key := s.key(scope, f.ID)
	if _, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &key}); err == nil {
		return f, nil // the scope has these bytes already
	} else if !notFound(err) {
		return files.File{}, fmt.Errorf("s3store: %w", err)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return files.File{}, fmt.Errorf("s3store: %w", err)
	}
	if _, err := s.client.PutObject(ctx, &s3.PutObjectInput{Bucket: &s.bucket, Key: &key, Body: tmp,
		ContentLength: aws.Int64(n), ContentType: aws.String(f.MediaType)}); err != nil {
		return files.File{}, fmt.Errorf("s3store: %w", err)
	}
	return f, nil
}

// Open returns a file's bytes.
func (s *Store) Open(ctx context.Context, scope, id string) (io.ReadCloser, files.File, error) {
	if !files.ValidID(id) {
		return nil, files.File{}, files.ErrNotFound
	}
	key := s.key(scope, id)
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &key})
	if notFound(err) {
		return nil, files.File{}, files.ErrNotFound
	}
	if err != nil {
		return nil, files.File{}, fmt.Errorf("s3store: %w", err)
	}
	f := files.File{ID: id, MediaType: aws.ToString(out.ContentType), Size: aws.ToInt64(out.ContentLength)}
	return out.Body, f, nil
}

// Delete removes a file.
func (s *Store) Delete(ctx context.Context, scope, id string) error {
	if !files.ValidID(id) {
		return files.ErrNotFound
	}
	key := s.key(scope, id)
	if _, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &key}); notFound(err) {
		return files.ErrNotFound
	} else if err != nil {
		return fmt.Errorf("s3store: %w", err)
	}
	if _, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &key}); err != nil {
		return fmt.Errorf("s3store: %w", err)
	}
	return nil
}

// Count is how many files scope holds.
func (s *Store) Count(ctx context.Context, scope string) (int, error) {
	prefix := s.scopeDir(scope)
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: &prefix})
	n := 0
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return 0, fmt.Errorf("s3store: %w", err)
		}
		for _, o := range page.Contents {
			if files.ValidID(strings.TrimPrefix(aws.ToString(o.Key), prefix)) {
				n++
			}
		}
	}
	return n, nil
}

// notFound reports whether err is S3's "no such key".
func notFound(err error) bool {
	if err == nil {
		return false
	}
	var nsk *types.NoSuchKey
	var nf *types.NotFound
	var re *smithyhttp.ResponseError
	return errors.As(err, &nsk) || errors.As(err, &nf) || errors.As(err, &re) && re.HTTPStatusCode() == http.StatusNotFound
}

// headWriter keeps the first 512 bytes written to it, to sniff.
type headWriter struct{ b *[]byte }

func (h headWriter) Write(p []byte) (int, error) {
	if room := 512 - len(*h.b); room > 0 {
		*h.b = append(*h.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}
