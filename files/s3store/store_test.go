package s3store_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/agentui/agentui/files"
	"github.com/agentui/agentui/files/filestest"
	"github.com/agentui/agentui/files/s3store"
	"github.com/agentui/agentui/internal/testkit/testutil"
)

// gateway starts a real S3-compatible server, versitygw (an S3 gateway
// over a directory; `make test` builds it), on a free port, and returns a
// client of it.
func gateway(t *testing.T) *s3.Client {
	t.Helper()
	bin := os.Getenv("VERSITYGW")
	if bin == "" {
		bin, _ = exec.LookPath("versitygw")
	}
	if bin == "" {
		testutil.Missing(t, "versitygw not found: make test builds it (go install github.com/versity/versitygw/cmd/versitygw@v1.8.0), or set VERSITYGW")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "--port", addr, "--access", "agentui", "--secret", "agentui-test-secret", "--quiet", "posix", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	testutil.Eventually(t, 30*time.Second, "versitygw on "+addr+" to answer", func() bool {
		resp, err := http.Get("http://" + addr + "/")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
	return s3.New(s3.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String("http://" + addr),
		UsePathStyle: true,
		Credentials:  aws.NewCredentialsCache(credentials{}),
	})
}

type credentials struct{}

func (credentials) Retrieve(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: "agentui", SecretAccessKey: "agentui-test-secret"}, nil
}

// The S3 store keeps the contract every file store keeps, against a real
// S3-compatible server.
func TestStoreOnAnS3Server(t *testing.T) {
	client := gateway(t)
	n := 0
	filestest.Run(t, func(t *testing.T) files.Store {
		n++
		bucket := "agentui-test-" + strconv.Itoa(n)
		if _, err := client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
			t.Fatal(err)
		}
		return s3store.New(client, bucket, "")
	})
}

// With expiry, a file goes once unused for its ttl (and the renewal step),
// a file read meanwhile stays, and a presigned upload never finalized
// goes after the ttl: on a real S3-compatible server, with the store's
// clock moved on (the server's own clock stays behind it, as a renewal
// can only make an object newer).
func TestExpiryOnAnS3Server(t *testing.T) {
	client := gateway(t)
	ctx := context.Background()
	bucket := "agentui-expiry"
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	clock := func() time.Time { return now }
	store := s3store.New(client, bucket, "", s3store.WithExpiry(time.Hour), s3store.WithClock(clock))
	put := func(body string) files.File {
		t.Helper()
		f, err := store.Put(ctx, "alice", strings.NewReader(body), 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	read, unread := put("read later"), put("never read")
	staged, err := store.PresignUpload(ctx, "alice", "text/plain", 3, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPut, staged.URL, strings.NewReader("abc"))
	for k, v := range staged.Headers {
		req.Header.Set(k, v)
	}
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the presigned PUT: %v %v", resp, err)
	}

	now = now.Add(50 * time.Minute)
	body, _, err := store.Open(ctx, "alice", read.ID)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, body)
	body.Close()                    // renews its time of use
	now = now.Add(30 * time.Minute) // 80 minutes after the puts: past 1.1×ttl for the unread file
	if err := store.Expire(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := store.Open(ctx, "alice", unread.ID); !errors.Is(err, files.ErrNotFound) {
		t.Fatalf("the file never read: %v, want it expired", err)
	}
	if body, _, err := store.Open(ctx, "alice", read.ID); err != nil {
		t.Fatalf("the file read 30 minutes ago: %v", err)
	} else {
		body.Close()
	}
	if _, err := store.OpenStaged(ctx, "alice", staged.Key); !errors.Is(err, files.ErrNotFound) {
		t.Fatalf("the upload never finalized: %v, want it expired", err)
	}
	now = now.Add(2 * time.Hour)
	if err := store.Expire(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := store.Count(ctx, "alice"); err != nil || n != 0 {
		t.Fatalf("after two more hours: %d files (%v)", n, err)
	}
}
