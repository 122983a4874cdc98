package redact

import (
	"encoding/base64"
	"math/rand/v2"
	"regexp"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

// tok builds a fake token: prefix + n characters of alphabet from a fixed
// seed. Tests build their secrets at run time so that the source holds no
// string a secret scanner would flag.
func tok(prefix, alphabet string, n int) string {
	seed := uint64(len(prefix)*131 + n)
	for i := 0; i < len(prefix); i++ {
		seed = seed*31 + uint64(prefix[i])
	}
	r := rand.New(rand.NewPCG(seed, 7))
	for {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		s := string(b)
		if n < 20 || !strings.ContainsAny(alphabet, digits) || !strings.ContainsAny(alphabet, upper) || !strings.ContainsAny(alphabet, lower) || mixed3(s) {
			return prefix + s
		}
	}
}

type redactCase struct {
	name, in string
	want     string // "" = unchanged
}

func runCases(t *testing.T, r *Redactor, cases []redactCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, findings := r.Redact(c.in)
			want := c.want
			if want == "" {
				want = c.in
			}
			if got != want {
				t.Errorf("Redact(%q)\n got %q\nwant %q\nfindings %v", c.in, got, want, findings)
			}
			if (c.want == "") != (len(findings) == 0) {
				t.Errorf("findings %v for %q", findings, c.in)
			}
		})
	}
}

func TestProviderRules(t *testing.T) {
	openai := tok("sk-proj-", b64url, 120)
	legacy := tok("sk-", b62, 20) + "T3BlbkFJ" + tok("", b62, 20)
	ant := tok("sk-ant-api03-", b64url, 93) + "AA"
	akia := tok("AKIA", upper+"234567", 16)
	ghp := tok("ghp_", b62, 36)
	pat := tok("github_pat_", b62, 22) + "_" + tok("", b62, 59)
	glpat := tok("glpat-", b62, 20)
	xoxb := "xoxb-" + tok("", digits, 12) + "-" + tok("", digits, 13) + "-" + tok("", b62, 24)
	hook := "T" + tok("", upper+digits, 8) + "/B" + tok("", upper+digits, 10) + "/" + tok("", b62, 24)
	stripe := tok("sk_live_", b62, 24)
	google := tok("AIza", b64url, 35)
	sg := tok("SG.", b64url, 22) + "." + tok("", b64url, 43)
	npm := tok("npm_", b62, 36)
	hf := tok("hf_", upper+lower, 34)
	jwt := "eyJhbGciOiJIUzI1NiJ9." + "eyJzdWIiOiIxMjM0In0." + tok("", b64url, 43)
	azure := tok("", b64std, 86) + "=="
	notion := tok("secret_", b62, 43)
	notionNew := "ntn_" + tok("", digits, 11) + tok("", b62, 35)
	doppler := tok("dp.st.prd.", b62, 40)
	dopplerPT := tok("dp.pt.", b62, 43)
	atlassian := tok("ATATT3", b64url+"=", 186)
	fcm := tok("AAAA", b64url, 7) + ":" + tok("APA91b", b64url, 134)
	pulumi := tok("pul-", hexLow, 40)
	runCases(t, Default(), []redactCase{
		{"notion", `NOTION_TOKEN=` + notion, `NOTION_TOKEN=[REDACTED:notion-token]`},
		{"notion ntn_", `notion = Client(auth="` + notionNew + `")`, `notion = Client(auth="[REDACTED:notion-token]")`},
		{"doppler service token", `DOPPLER_TOKEN=` + doppler, `DOPPLER_TOKEN=[REDACTED:doppler-token]`},
		{"doppler personal token", `doppler login --token ` + dopplerPT, `doppler login --token [REDACTED:doppler-token]`},
		{"atlassian", `JIRA_API_TOKEN: ` + atlassian, `JIRA_API_TOKEN: [REDACTED:atlassian-token]`},
		{"fcm server key", `'Authorization' => 'key=` + fcm + `'`, `'Authorization' => 'key=[REDACTED:fcm-server-key]'`},
		{"pulumi", `export PULUMI_ACCESS_TOKEN=` + pulumi, `export PULUMI_ACCESS_TOKEN=[REDACTED:pulumi-token]`},
		{"openai project", `key := "` + openai + `"`, `key := "[REDACTED:openai-key]"`},
		{"openai legacy", `OPENAI_API_KEY=` + legacy, `OPENAI_API_KEY=[REDACTED:openai-key]`},
		{"anthropic", `x = '` + ant + `'`, `x = '[REDACTED:anthropic-key]'`},
		{"aws access key id", `id: ` + akia, `id: [REDACTED:aws-access-key-id]`},
		{"aws documentation key id too", `id: ` + "AKIAIOSFODNN7" + "EXAMPLE", `id: [REDACTED:aws-access-key-id]`},
		{"github classic", `"` + ghp + `"`, `"[REDACTED:github-token]"`},
		{"github fine-grained", `GH=` + pat, `GH=[REDACTED:github-token]`},
		{"gitlab", `glab auth login --token ` + glpat, `glab auth login --token [REDACTED:gitlab-token]`},
		{"slack bot", `slack(` + xoxb + `)`, `slack([REDACTED:slack-token])`},
		{"slack webhook keeps the host", `url: https://hooks.slack.com/services/` + hook, `url: https://hooks.slack.com/[REDACTED:slack-webhook]`},
		{"stripe", stripe, `[REDACTED:stripe-key]`},
		{"google", `?key=` + google + `&q=x`, `?key=[REDACTED:google-api-key]&q=x`},
		{"sendgrid", `sg(` + sg + `)`, `sg([REDACTED:sendgrid-key])`},
		{"npm", `//registry.npmjs.org/:_authToken=` + npm, `//registry.npmjs.org/:_authToken=[REDACTED:npm-token]`},
		{"hugging face", `login("` + hf + `")`, `login("[REDACTED:huggingface-token]")`},
		{"jwt", `cookie: session=` + jwt, `cookie: session=[REDACTED:jwt]`},
		{"azure account key", `AccountName=a;AccountKey=` + azure + `;EndpointSuffix=x`, `AccountName=a;AccountKey=[REDACTED:azure-key];EndpointSuffix=x`},

		// Negatives: wrong length, glued to a word, filler, public keys.
		{"aws id too short", `AKIA` + tok("", upper, 15) + ` `, ""},
		{"aws id inside a word", `X` + akia, ""},
		{"github filler", `ghp_` + strings.Repeat("x", 36), ""},
		{"github too short", tok("ghp_", b62, 30), ""},
		{"sk- kebab words", `sk-cluster-node-pool-manager-eu-west-1-replica`, ""},
		{"stripe publishable", tok("pk_live_", b62, 24), ""},
		{"google key too short", tok("AIza", b64url, 34) + " ", ""},
		{"hugging face identifier", `hf_model_name_for_the_tokenizer_cache_dir`, ""},
		{"jwt without signature", `eyJhbGciOiJub25lIn0.eyJzdWIiOiIxMjM0In0.`, ""},
		{"task- is not sk-", "task-" + tok("", b62, 40), ""},
		{"secret_ identifier", "secret_" + strings.Repeat("abcdefghijklmnopqrstuvwxyz", 2)[:43], ""},
		{"fcm device token", `fcm(` + tok("", b64url, 11) + ":" + tok("APA91b", b64url, 134) + `)`, ""},
		{"pulumi too short", tok("pul-", hexLow, 39) + " ", ""},
	})
}

func TestPrivateKeys(t *testing.T) {
	body := tok("", b64std, 64) + "\n" + tok("", b64std, 64) + "\n" + tok("", b64std, 20) + "==\n"
	block := "-----BEGIN RSA PRIVATE KEY-----\n" + body + "-----END RSA PRIVATE KEY-----"
	escaped := strings.ReplaceAll(block+"\n", "\n", `\n`)
	runCases(t, Default(), []redactCase{
		{"whole block", "key := `" + block + "`\nnext()", "key := `[REDACTED:private-key]`\nnext()"},
		{"openssh", strings.ReplaceAll(block, "RSA", "OPENSSH"), "[REDACTED:private-key]"},
		{"encrypted pkcs8", strings.ReplaceAll(block, "RSA", "ENCRYPTED"), "[REDACTED:private-key]"},
		{"escaped in JSON", `{"private_key": "` + escaped + `"}`, `{"private_key": "[REDACTED:private-key]\n"}`},
		{"unterminated runs to the end", "// pasted:\n-----BEGIN PRIVATE KEY-----\n" + body + "trailing", "// pasted:\n[REDACTED:private-key]"},
		{"constant naming the type", `const pemType = "-----BEGIN RSA PRIVATE KEY-----"` + "\nfunc f() {}", ""},
		{"certificate", "-----BEGIN CERTIFICATE-----\n" + body + "-----END CERTIFICATE-----", ""},
		{"public key", "-----BEGIN PUBLIC KEY-----\n" + body + "-----END PUBLIC KEY-----", ""},
	})
}

func TestHeadersAndURLs(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	azurePAT := tok("", "abcdefghijklmnopqrstuvwxyz234567", 52)
	hexTok := tok("", hexLow, 40)
	bearer := tok("", b64url, 40)
	basic := base64.StdEncoding.EncodeToString([]byte("deploy:" + tok("", b62, 16)))
	pw := tok("", b62, 18)
	runCases(t, Default(), []redactCase{
		{"bearer header", `Authorization: Bearer ` + bearer, `Authorization: Bearer [REDACTED:bearer-token]`},
		{"bearer in a code string", `h.Set("authorization", "bearer ` + bearer + `")`, `h.Set("authorization", "bearer [REDACTED:bearer-token]")`},
		{"basic header", `-H "Authorization: Basic ` + basic + `"`, `-H "Authorization: Basic [REDACTED:basic-auth]"`},
		{"token scheme", `Authorization: token ` + bearer, `Authorization: token [REDACTED:auth-header]`},
		{"url password keeps user and host", `postgres://app:` + pw + `@db:5432/x`, `postgres://app:[REDACTED:url-password]@db:5432/x`},
		{"url password without user", `redis://:` + pw + `@cache:6379`, `redis://:[REDACTED:url-password]@cache:6379`},
		{"curl -u", `curl -u ci:` + pw + ` https://x`, `curl -u ci:[REDACTED:cli-credentials] https://x`},
		// Common human passwords go as they do in a URI: the position says
		// what they are.
		{"basic common password", `Authorization: Basic ` + b64("svc:"+"P@ss"+"w0rd!"), `Authorization: Basic [REDACTED:basic-auth]`},
		{"basic password with the word", `Authorization: Basic ` + b64("deploy:"+"MyPass"+"word2024!"), `Authorization: Basic [REDACTED:basic-auth]`},
		{"basic leetspeak", `-H "Authorization: Basic ` + b64("jenkins:"+"Passw0"+"rd#1") + `"`, `-H "Authorization: Basic [REDACTED:basic-auth]"`},
		{"basic admin:admin", `Authorization: Basic ` + b64("admin:"+"ad"+"min"), `Authorization: Basic [REDACTED:basic-auth]`},
		{"curl -u common password", `curl -u deploy:` + "MyPass" + "word2024!" + ` https://x`, `curl -u deploy:[REDACTED:cli-credentials] https://x`},
		{"curl --user leetspeak", `curl --user ci:` + "Passw0" + "rd#1" + ` https://x`, `curl --user ci:[REDACTED:cli-credentials] https://x`},
		{"curl -u admin:admin", `curl -u admin:` + "ad" + "min" + ` http://localhost:8080/api`, `curl -u admin:[REDACTED:cli-credentials] http://localhost:8080/api`},
		// A token as the user name: nothing else in the URI is secret.
		{"azure devops token as user", `git clone https://` + azurePAT + `@dev.azure.com/acme/app/_git/app`, `git clone https://[REDACTED:url-password]@dev.azure.com/acme/app/_git/app`},
		{"token with x-oauth-basic", `"git+https://` + hexTok + `:x-oauth-basic@github.com/acme/lib.git"`, `"git+https://[REDACTED:url-password]:x-oauth-basic@github.com/acme/lib.git"`},
		{"token with an empty password", `https://` + pw + pw + `:@gitlab.example.com/acme/app.git`, `https://[REDACTED:url-password]:@gitlab.example.com/acme/app.git`},
		// JSON encoders that escape '/'.
		{"json-escaped uri", `{"dsn": "postgres:\/\/admin:` + "Pw0r" + `d5@db.internal:5432\/app"}`, `{"dsn": "postgres:\/\/admin:[REDACTED:url-password]@db.internal:5432\/app"}`},
		{"json-escaped slash in the password", `"mysql:\/\/app:` + "ab\\/" + `cd9@db\/app"`, `"mysql:\/\/app:[REDACTED:url-password]@db\/app"`},
		{"wget --password", `wget --password=` + "P@ss" + "w0rd!" + ` https://x`, `wget --password=[REDACTED:password] https://x`},

		{"bearer concatenated", `"Bearer " + token`, ""},
		{"bearer template", "`Bearer ${token}`", ""},
		{"bearer placeholder", `Authorization: Bearer <your-access-token>`, ""},
		{"bearer in prose", `the bearer of this message is trusted`, ""},
		{"basic in prose", `a basic configuration is enough`, ""},
		{"basic without colon", `Basic ` + base64.StdEncoding.EncodeToString([]byte("just-a-token-value")), ""},
		{"basic field words", `Authorization: Basic ` + b64("user:password"), ""},
		{"basic template", `Authorization: Basic ` + b64("<user>:<password>"), ""},
		{"basic mask", `Authorization: Basic ` + b64("admin:****"), ""},
		{"basic rfc 7617 example", `Authorization: Basic ` + b64("Aladdin:open sesame"), ""},
		{"curl -u field words", `curl -u user:password https://x`, ""},
		{"curl -u variables", `curl -u "$USER:$PASS" https://x`, ""},
		{"curl -u template", `curl -u admin:<password> https://x`, ""},
		{"curl -u example", `curl -u demo:your-api-key https://x`, ""},
		{"user names stay", `ssh://git@github.com/acme/app.git https://deploy@registry.example.com/v2/ https://jenkins-deployer-2024@ci.example.com`, ""},
		{"long user name", `https://john.smith.contractor2024@git.example.com/app.git`, ""},
		{"x-oauth-basic after a user name", `https://deploy:x-oauth-basic@github.com/acme/lib.git`, ""},
		{"json-escaped path with @", `"https:\/\/registry.npmjs.org\/@types\/node"`, ""},
		{"docker -u user:group", `docker run --rm -u www-data:www-data app ls`, ""},
		{"docker exec --user", `docker exec --user node:node web npm test`, ""},
		{"url doc password", `postgres://user:password@localhost:5432/db`, ""},
		{"url template password", `postgres://${PGUSER}:${PGPASSWORD}@db/app`, ""},
		{"url port", `http://localhost:8080/path`, ""},
		{"scp-style git", `git@github.com:acme/orders.git`, ""},
		{"docker -u uid:gid", `docker run -u 1000:1000 alpine`, ""},
		{"git push -u", `git push -u origin main`, ""},
	})
}

func TestGenericSecret(t *testing.T) {
	v := tok("", b62, 24)
	h := tok("", hexLow, 40)
	vault := tok("hvs.", b62, 24)
	discord := tok("MTE", b62, 21) + "." + tok("", b64url, 6) + "." + tok("", b64url, 27)
	dotted := tok("", b62, 12) + "." + tok("k", b62, 11)
	R := "[REDACTED:generic-secret]"
	runCases(t, Default(), []redactCase{
		{"go :=", `dbPassword := "` + v + `"`, `dbPassword := "` + R + `"`},
		{"go typed var", `var apiKey string = "` + v + `"`, `var apiKey string = "` + R + `"`},
		{"java typed", `String password = "` + v + `";`, `String password = "` + R + `";`},
		{"ts annotation", `const token: string = "` + v + `";`, `const token: string = "` + R + `";`},
		{"python annotation", `api_key: str = '` + v + `'`, `api_key: str = '` + R + `'`},
		{"yaml", `client_secret: ` + v, `client_secret: ` + R},
		{"json", `{"client_secret": "` + v + `"}`, `{"client_secret": "` + R + `"}`},
		{"env", `GITHUB_TOKEN=` + h, `GITHUB_TOKEN=` + R},
		{"env export quoted", `export AUTH_TOKEN='` + v + `'`, `export AUTH_TOKEN='` + R + `'`},
		{"flag", `app --password ` + v + ` --debug`, `app --password ` + R + ` --debug`},
		{"flag with =", `app --client-secret=` + v, `app --client-secret=` + R},
		{"index expression", `cfg["apiKey"] = "` + v + `"`, `cfg["apiKey"] = "` + R + `"`},
		{"php arrow", `'secret' => '` + v + `',`, `'secret' => '` + R + `',`},
		{"xml", `<accessKey>` + v + `</accessKey>`, `<accessKey>` + R + `</accessKey>`},
		{"escaped json", `"{\"password\":\"` + v + `\"}"`, `"{\"password\":\"` + R + `\"}"`},
		{"env default", `API_SECRET = os.getenv("API_SECRET", "` + v + `")`, `API_SECRET = os.getenv("API_SECRET", "` + R + `")`},
		{"bytes call", `key := []byte("` + v + `") // signingKey`, ""},
		{"bytes call with a secret name", `signingKey := []byte("` + v + `")`, `signingKey := []byte("` + R + `")`},
		{"sql", `ALTER USER app WITH PASSWORD '` + v + `';`, `ALTER USER app WITH PASSWORD '` + R + `';`},
		{"aws secret by name", `aws_secret_access_key = ` + tok("", b64std, 40), `aws_secret_access_key = [REDACTED:aws-secret-key]`},
		// Tokens with dots, unquoted on configuration lines.
		{"vault env", `VAULT_TOKEN=` + vault, `VAULT_TOKEN=` + R},
		{"vault yaml", `  vault_token: ` + vault, `  vault_token: ` + R},
		{"vault yaml list", `  - vault_token: ` + vault + ` # dev`, `  - vault_token: ` + R + ` # dev`},
		{"vault header", `X-Vault-Token: ` + vault, `X-Vault-Token: ` + R},
		{"vault header in curl", `curl -H "X-Vault-Token: ` + vault + `" https://vault:8200/v1/kv`, `curl -H "X-Vault-Token: ` + R + `" https://vault:8200/v1/kv`},
		{"discord env", `DISCORD_TOKEN=` + discord, `DISCORD_TOKEN=` + R},
		{"two-part key", `API_KEY=` + dotted, `API_KEY=` + R},
		{"properties", `app.api.token=` + dotted, `app.api.token=` + R},
		{"env prefix of a command", `API_TOKEN=` + dotted + ` ./deploy.sh`, `API_TOKEN=` + R + ` ./deploy.sh`},

		{"getenv", `password = os.Getenv("DB_PASSWORD")`, ""},
		{"process.env", `const token = process.env.GITHUB_TOKEN;`, ""},
		{"too short", `token = "abc"`, ""},
		{"short random", `token = "` + tok("", b62, 6) + `"`, ""},
		{"placeholder changeme", `password = "changeme"`, ""},
		{"placeholder x", `api_key = "xxxxxxxxxxxxxxxxxxxx"`, ""},
		{"placeholder angle", `token: "<your-token>"`, ""},
		{"placeholder var", `PASSWORD=${DB_PASSWORD}`, ""},
		{"placeholder helm", `password: "{{ .Values.db.password }}"`, ""},
		{"placeholder stars", `password: "********"`, ""},
		{"empty", `password = ""`, ""},
		{"word", `password: required`, ""},
		// Under a password name it goes (see TestPasswordNames); under
		// other secret names a word-like value is let through.
		{"human phrase", `api_key = "Summer2024"`, ""},
		{"identifier", `secret = defaultSecret`, ""},
		{"dotted reference", `token = self.config.token`, ""},
		{"dotted settings", `SECRET_KEY = settings.SECRET_KEY`, ""},
		{"dotted js field", `  apiKey: config.apiKeyFromVault,`, ""},
		{"dotted keyword argument", `client = Client(token=self.accessToken)`, ""},
		{"dotted ts type", `  token: Auth.AccessTokenV2`, ""},
		{"dotted go field", `	password = cfg.Password`, ""},
		{"camel reference", `apiKey = defaultApiKeyValue`, ""},
		{"call", `token := newToken(ctx)`, ""},
		{"sha256 checksum", `sha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"`, ""},
		{"token hash", `tokenHash = "` + tok("", hexLow, 64) + `"`, ""},
		{"commit hash", `git checkout ` + h, ""},
		{"commit field", `commit: ` + h, ""},
		{"uuid id", `token_id = "` + "0f8fad5b-d9cb-469f-a165-70867728950e" + `"`, ""},
		{"tokenizer", `tokenizer = "cl100k_base"`, ""},
		{"max tokens", `maxTokens = 4096`, ""},
		{"author", `author = "Ana Souza"`, ""},
		{"secret name", `secretName: orders-db-credentials`, ""},
		{"token url", `token_url = "https://oauth2.googleapis.com/token"`, ""},
		{"path", `PWD=/home/ana/src`, ""},
		{"hex integer", `FS_IOC_ADD_ENCRYPTION_KEY = 0xc0506617`, ""},
		{"format string", `password=%s host=%s`, ""},
		{"comparison", `if token == "` + v + `" {`, ""},
		{"field list", `// name:password:uid:gid`, ""},
		{"glued colon", `{password:pw, user}`, ""},
		{"string with the name", `env = append(env, "PWD="+dir)`, ""},
		{"base64 of a placeholder", `auth: "` + base64.StdEncoding.EncodeToString([]byte("ana:not my real password")) + `"`, ""},
		{"sequence", `APIKey = "sk-proj-abcdefghijklmnop1234"`, ""},
	})
}

func TestAWSPair(t *testing.T) {
	id, secret := tok("AKIA", upper+"234567", 16), tok("", b64std, 40)
	got := Default().String(`creds.NewStaticCredentials("` + id + `", "` + secret + `", "")`)
	want := `creds.NewStaticCredentials("[REDACTED:aws-access-key-id]", "[REDACTED:aws-secret-key]", "")`
	if got != want {
		t.Errorf("got %s", got)
	}
	// Far from any access key id, a 40-character string is left alone.
	if in := `x := "` + secret + `"`; Default().String(in) != in {
		t.Errorf("redacted a lone 40-char string")
	}
}

func TestFindingsOffsetsAndMerging(t *testing.T) {
	ghp := tok("ghp_", b62, 36)
	in := "token: " + ghp + "\nlog: using " + ghp + " now\n"
	out, fs := Default().Redact(in)
	if strings.Contains(out, ghp) || len(fs) != 2 {
		t.Fatalf("out %q findings %v", out, fs)
	}
	for _, f := range fs {
		if in[f.Start:f.End] != ghp || f.Rule != "github-token" {
			t.Errorf("finding %+v covers %q", f, in[f.Start:f.End])
		}
	}
	// A generic secret echoed elsewhere is redacted there too, although
	// no rule would match the bare value.
	v := tok("", b62, 20)
	out = Default().String("password = \"" + v + "\"\nprint(\"" + v + "\")")
	if strings.Contains(out, v) {
		t.Errorf("echoed secret survived: %s", out)
	}
	// Overlapping findings merge into one span named after the most
	// specific rule.
	// Here the GitHub rule finds the token and the generic rule the whole
	// value, which is longer.
	out, fs = Default().Redact(`token = "` + ghp + `-x9Zq7"`)
	if len(fs) != 1 || fs[0].Rule != "github-token" || out != `token = "[REDACTED:github-token]"` {
		t.Errorf("merge: %q %v", out, fs)
	}
}

func TestUnchangedTextIsTheSameString(t *testing.T) {
	in := strings.Repeat("func f(x int) int { return x * 2 } // token handling\n", 50)
	out, fs := Default().Redact(in)
	if fs != nil || unsafe.StringData(out) != unsafe.StringData(in) {
		t.Fatal("clean text was copied or changed")
	}
	if n := testing.AllocsPerRun(20, func() { Default().Redact(in) }); n != 0 {
		t.Errorf("%v allocations for clean text, want 0", n)
	}
}

func TestIdempotentAndMarkersKept(t *testing.T) {
	in := `password = "[REDACTED:generic-secret]"` + "\nAuthorization: Bearer [REDACTED:jwt]\npostgres://u:[REDACTED:url-password]@h/db"
	out, fs := Default().Redact(in)
	if out != in || fs != nil {
		t.Errorf("existing markers changed: %q %v", out, fs)
	}
	for _, c := range loadCorpus(t) {
		src, _ := c.expand()
		once := Default().String(src)
		if twice := Default().String(once); twice != once {
			t.Errorf("%s: not idempotent:\n%s\n%s", c.title, once, twice)
		}
	}
}

func TestExtraPatterns(t *testing.T) {
	whole, err := WithExtraPatterns("acme-token", `acme_[a-z0-9]{24}`)
	if err != nil {
		t.Fatal(err)
	}
	group, err := WithExtraPatterns("internal-key", `X-Internal-Key: (\w{16,})`)
	if err != nil {
		t.Fatal(err)
	}
	r := New(whole, group)
	acme := tok("acme_", lower+digits, 24)
	key := tok("", b62, 20)
	runCases(t, r, []redactCase{
		{"whole match", `t := "` + acme + `"`, `t := "[REDACTED:acme-token]"`},
		{"first group", "X-Internal-Key: " + key, "X-Internal-Key: [REDACTED:internal-key]"},
	})
	if got := Default().String(`t := "` + acme + `"`); !strings.Contains(got, acme) {
		t.Errorf("extra pattern leaked into Default: %s", got)
	}
	if _, err := WithExtraPatterns("bad", `acme_[`); err == nil || !strings.Contains(err.Error(), `"bad"`) {
		t.Errorf("bad regexp: err %v, want one naming the pattern", err)
	}
	if _, err := WithExtraPatterns("Bad Name", `x`); err == nil {
		t.Error("bad name accepted")
	}
}

func TestEntropyThreshold(t *testing.T) {
	// 16 characters with some repetition: about 3.5 bits per character.
	in := `token = "aB3aB3cD4cD4eF5e"`
	if e := entropy("aB3aB3cD4cD4eF5e"); e < 3 || e > 3.8 {
		t.Fatalf("test value has entropy %.2f", e)
	}
	if Default().String(in) == in {
		t.Error("default threshold kept the value")
	}
	if got := New(WithEntropyThreshold(4.5)).String(in); got != in {
		t.Errorf("high threshold redacted: %s", got)
	}
	if New(WithEntropyThreshold(-1)).entropy != DefaultEntropyThreshold {
		t.Error("non-positive threshold not ignored")
	}
}

func TestDefaultIsSharedAndConcurrent(t *testing.T) {
	if a, b := Default(), Default(); a != b {
		t.Fatal("Default is not shared")
	}
	in := "GITHUB_TOKEN=" + tok("ghp_", b62, 36) + "\n"
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if got := Default().String(in); got != "GITHUB_TOKEN=[REDACTED:github-token]\n" {
					t.Errorf("got %q", got)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestShortRandomRecall pins the recall of the generic-secret value test on
// random strings (see the package comment): a regression in looksRandom
// shows here before it shows as a missed secret.
func TestLooksRandomRecall(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		alphabet string
		n        int
		minRate  float64
	}{
		{b62, 16, 0.96}, {b62, 24, 0.99}, {b62, 40, 0.995},
		{hexLow, 32, 0.99}, {hexLow, 64, 0.998},
		{b64std, 40, 0.995},
	} {
		hit := 0
		const N = 5000
		for range N {
			b := make([]byte, c.n)
			for i := range b {
				b[i] = c.alphabet[r.IntN(len(c.alphabet))]
			}
			if looksRandom(string(b), DefaultEntropyThreshold) {
				hit++
			}
		}
		if rate := float64(hit) / N; rate < c.minRate {
			t.Errorf("alphabet of %d, length %d: recall %.4f < %.3f", len(c.alphabet), c.n, rate, c.minRate)
		}
	}
}

// TestDottedTokenRecall measures tokens with dots ("hvs.<24>", Discord's
// three parts, "<12>.<12>") unquoted on configuration lines, where a
// dotted value is no code reference: 300 random tokens per shape and
// line. The floor leaves room for the value test's misses on random
// strings (TestLooksRandomRecall); measured 299 or 300 of 300 each, where
// taking dotted values for code references let 41 to 191 through.
func TestDottedTokenRecall(t *testing.T) {
	g := gen{rand.New(rand.NewPCG(11, 12))}
	shapes := []struct {
		name string
		make func() string
	}{
		{"vault", func() string { return "hvs." + g.random(b62, 24) }},
		{"discord", func() string {
			return base64.RawStdEncoding.EncodeToString([]byte(g.digits(18, 19))) + "." + g.str(b64url, 6) + "." + g.str(b64url, 27)
		}},
		{"two parts", func() string { return g.random(b62, 12) + "." + g.random(b62, 12) }},
	}
	lines := []string{"VAULT_TOKEN=%s", "  vault_token: %s", "X-Vault-Token: %s", "DISCORD_TOKEN=%s", "API_KEY=%s"}
	const n = 300
	for _, sh := range shapes {
		for _, line := range lines {
			hit := 0
			for range n {
				v := sh.make()
				if !strings.Contains(Default().String(strings.Replace(line, "%s", v, 1)), v) {
					hit++
				}
			}
			t.Logf("%s in %q: %d/%d", sh.name, line, hit, n)
			if rate := float64(hit) / n; rate < 0.98 {
				t.Errorf("%s in %q: recall %d/%d", sh.name, line, hit, n)
			}
		}
	}
}

func TestRuleNamesAreDocumented(t *testing.T) {
	doc := docText(t)
	names := map[string]bool{"private-key": true, "url-password": true, "dsn-password": true, "cli-credentials": true, "bearer-token": true,
		"basic-auth": true, "auth-header": true, "aws-secret-key": true, "generic-secret": true}
	for _, r := range builtinRules {
		names[r.name] = true
	}
	for n := range names {
		if !regexp.MustCompile(`(?m)^//\t` + regexp.QuoteMeta(n) + ` `).MatchString(doc) {
			t.Errorf("rule %s is not in the table of the package comment", n)
		}
	}
}
