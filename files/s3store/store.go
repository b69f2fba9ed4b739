// Package s3store is a files.Store on an S3-compatible object store
// (AWS S3, or any server that speaks its API), for replicas that share
// their files. It is a module of its own: an application that keeps files
// in a directory does not build the AWS SDK.
//
// A file is one object, <prefix><scope hash>/<file id>, with its sniffed
// type as its Content-Type; an upload is spooled to a temporary file while
// it is hashed and sniffed, then put under its hash, once per scope.
//
// With WithExpiry, a file goes once neither kept nor read for the ttl, as
// files.Dir's do: each object carries the time it was last used in its
// metadata ("used"), renewed by copying the object onto itself, and the
// store sweeps its prefix in the background. A bucket lifecycle rule
// cannot do this: it expires objects by their age, also the files of a
// chat still in use.
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
	"strconv"
	"strings"
	"sync"
	"time"

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
	ttl    time.Duration // 0: files never expire
	now    func() time.Time

	mu        sync.Mutex
	nextSweep time.Time
	sweeping  bool
}

// Option configures a Store.
type Option func(*Store)

// WithExpiry makes files expire ttl after they were last kept or read (give
// it the history's ttl, as files.WithExpiry). A file's time of use is
// renewed at most every ttl/10, so it goes between ttl and 1.1×ttl after
// its last use; files put before expiry was on count from their last
// write. Staged presigned uploads never finalized go ttl after their put.
func WithExpiry(ttl time.Duration) Option { return func(s *Store) { s.ttl = ttl } }

// WithClock sets the clock expiry is measured by (for tests).
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

var _ files.Store = (*Store)(nil)

// New returns a store of bucket's objects under prefix ("agentui-files/"
// when empty), through client.
func New(client *s3.Client, bucket, prefix string, opts ...Option) *Store {
	if prefix == "" {
		prefix = "agentui-files/"
	}
	s := &Store{client: client, bucket: bucket, prefix: prefix, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	return s
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
	s.sweepSoon()
	key := s.key(scope, f.ID)
	if head, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &key}); err == nil {
		s.touch(ctx, key, head.Metadata, head.LastModified) // the scope has these bytes already
		return f, nil
	} else if !notFound(err) {
		return files.File{}, fmt.Errorf("s3store: %w", err)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return files.File{}, fmt.Errorf("s3store: %w", err)
	}
	if _, err := s.client.PutObject(ctx, &s3.PutObjectInput{Bucket: &s.bucket, Key: &key, Body: tmp,
		ContentLength: aws.Int64(n), ContentType: aws.String(f.MediaType), Metadata: s.usedNow()}); err != nil {
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
	if s.stale(out.Metadata, out.LastModified) {
		// Renewed once read, not while: a copy onto the object could
		// race its body on some servers.
		return &touchOnClose{ReadCloser: out.Body, touch: func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			s.touch(ctx, key, out.Metadata, out.LastModified)
		}}, f, nil
	}
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

// usedMeta is the metadata key of a file's time of last use (Unix
// seconds): x-amz-meta-used.
const usedMeta = "used"

// usedNow is the metadata of a file used now, when files expire.
func (s *Store) usedNow() map[string]string {
	if s.ttl <= 0 {
		return nil
	}
	return map[string]string{usedMeta: strconv.FormatInt(s.now().Unix(), 10)}
}

// used is when a file was last used: its metadata's time, or its last
// write when it has none.
func used(meta map[string]string, modified *time.Time) time.Time {
	if sec, err := strconv.ParseInt(meta[usedMeta], 10, 64); err == nil {
		return time.Unix(sec, 0)
	}
	return aws.ToTime(modified)
}

// stale reports whether a file's time of use is worth renewing: older
// than a tenth of the ttl, so a file read every turn is copied at most ten
// times a ttl.
func (s *Store) stale(meta map[string]string, modified *time.Time) bool {
	return s.ttl > 0 && used(meta, modified).Before(s.now().Add(-s.ttl/10))
}

// touch renews a file's time of use when it is stale, by copying the
// object onto itself with new metadata. A failed renewal is not an error
// to the caller (the file is there); at worst it expires a ttl after the
// last renewal that worked.
func (s *Store) touch(ctx context.Context, key string, meta map[string]string, modified *time.Time) {
	if !s.stale(meta, modified) {
		return
	}
	_, _ = s.client.CopyObject(ctx, &s3.CopyObjectInput{Bucket: &s.bucket, Key: &key,
		CopySource: aws.String(s.bucket + "/" + key), Metadata: s.usedNow(),
		MetadataDirective: types.MetadataDirectiveReplace})
}

// sweepSoon starts a sweep in the background when expiry is on, none runs
// and none ran in the last tenth of the ttl (at most ten minutes).
func (s *Store) sweepSoon() {
	if s.ttl <= 0 {
		return
	}
	now := s.now()
	s.mu.Lock()
	if s.sweeping || now.Before(s.nextSweep) {
		s.mu.Unlock()
		return
	}
	s.sweeping, s.nextSweep = true, now.Add(min(s.ttl/10, 10*time.Minute))
	s.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		_ = s.Expire(ctx)
		s.mu.Lock()
		s.sweeping = false
		s.mu.Unlock()
	}()
}

// Expire deletes the files under the store's prefix unused for longer
// than the ttl plus its renewal step (1.1×ttl), and the staged uploads put
// longer than the ttl ago. Puts call it in the background; call it
// yourself from a job when puts are rare. Without WithExpiry it does
// nothing.
func (s *Store) Expire(ctx context.Context) error {
	if s.ttl <= 0 {
		return nil
	}
	now := s.now()
	cutoff, stagedCutoff := now.Add(-s.ttl-s.ttl/10), now.Add(-s.ttl)
	staging := s.prefix + "staging/"
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: &s.prefix})
	var errs []error
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("s3store: %w", err)
		}
		for _, o := range page.Contents {
			key := aws.ToString(o.Key)
			if strings.HasPrefix(key, staging) {
				if aws.ToTime(o.LastModified).Before(stagedCutoff) {
					errs = append(errs, s.remove(ctx, key))
				}
				continue
			}
			// An object written after the cutoff was used after it (a
			// renewal rewrites it): only older ones need their metadata.
			if !aws.ToTime(o.LastModified).Before(cutoff) {
				continue
			}
			head, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &key})
			if err != nil {
				if !notFound(err) {
					errs = append(errs, fmt.Errorf("s3store: %w", err))
				}
				continue
			}
			if used(head.Metadata, head.LastModified).Before(cutoff) {
				errs = append(errs, s.remove(ctx, key))
			}
		}
	}
	return errors.Join(errs...)
}

func (s *Store) remove(ctx context.Context, key string) error {
	if _, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &key}); err != nil {
		return fmt.Errorf("s3store: %w", err)
	}
	return nil
}

// touchOnClose renews a file's time of use once its reader is closed.
type touchOnClose struct {
	io.ReadCloser
	once  sync.Once
	touch func()
}

func (t *touchOnClose) Close() error {
	err := t.ReadCloser.Close()
	t.once.Do(t.touch)
	return err
}
