// Package redact removes secrets from text before kodyls sends it to an LLM
// endpoint, and says which workspace files must never be read into a
// prompt at all.
//
// Code under review routinely contains credentials: a key pasted into a
// test, a DSN in a config file, a token in a log excerpt. An LLM endpoint
// is a third party (or a log on a shared inference box), so every prompt
// goes through Redactor.Redact, and files listed in DefaultIgnore or the
// kodus-config ignorePaths (see Ignore) are skipped whole.
//
// # Replacement format
//
// Each secret is replaced by "[REDACTED:<rule>]", where <rule> is the name
// of the rule that found it. Only the secret goes: names, quotes, user
// names and hosts stay, so the model still reads valid code and can tell
// what the value was for:
//
//	apiKey := "sk-proj-…"            → apiKey := "[REDACTED:openai-key]"
//	postgres://app:pw@db:5432/orders → postgres://app:[REDACTED:url-password]@db:5432/orders
//	Authorization: Bearer eyJhbGci…  → Authorization: Bearer [REDACTED:jwt]
//
// Text without secrets is returned as it is (the same string). Redacting
// the output again changes nothing. A secret of 8 or more bytes that was
// found once is also removed wherever else it occurs in the text.
//
// # Rules
//
// When findings overlap they are merged and named after the most specific
// rule (first in this table).
//
//	rule                   what                                            shape
//	---------------------  ----------------------------------------------  --------------------------------------------------
//	private-key            PEM private key block, redacted whole           -----BEGIN … PRIVATE KEY----- … -----END …-----
//	                       (RSA, EC, DSA, OPENSSH, PKCS#8, encrypted, PGP); (no END: to the end of the text); a base64
//	                                                                       body must follow, so a constant naming the
//	                                                                       block type is not a key
//	anthropic-key          Anthropic API key                               sk-ant-<kind><nn>-<32+ base64url>
//	openai-key             OpenAI key, legacy and project/service/admin    sk-[proj-|svcacct-|admin-]<32+ base64url>, with
//	                                                                       upper, lower and digits
//	aws-access-key-id      AWS access key id                               AKIA|ASIA|ABIA|ACCA + 16 upper alnum
//	github-token           GitHub classic and fine-grained tokens          ghp_|gho_|ghu_|ghs_|ghr_ + 36+ base62;
//	                                                                       github_pat_ + 40+
//	gitlab-token           GitLab personal/deploy/runner tokens            glpat-|gldt-|glrt-|glptt-|glsoat-|gloas- + 20+
//	slack-token            Slack bot/user/app tokens                       xox[abposre]-…; xapp-<n>-…
//	slack-webhook          Slack incoming webhook (the path)               hooks.slack.com/services|workflows|triggers/…
//	discord-webhook        Discord webhook (id and token)                  discord.com/api/webhooks/<id>/<token>
//	stripe-key             Stripe secret and restricted keys               sk_live_|sk_test_|rk_live_|rk_test_ + 20+ base62
//	stripe-webhook-secret  Stripe webhook signing secret                   whsec_ + 24+
//	google-api-key         Google API key                                  AIza + 35 base64url
//	google-oauth-secret    Google OAuth client secret                      GOCSPX- + 28
//	google-oauth-token     Google OAuth access token                       ya29. + 30+
//	twilio-api-key         Twilio API key SID                              SK + 32 hex
//	sendgrid-key           SendGrid API key                                SG.<22>.<43>
//	npm-token              npm access token                                npm_ + 36 base62
//	pypi-token             PyPI API token (macaroon)                       pypi-AgE…
//	huggingface-token      Hugging Face token                              hf_ + 34-40 letters, mixed case
//	groq-key               Groq API key                                    gsk_ + 48+ base62
//	digitalocean-token     DigitalOcean tokens                             dop_v1_|doo_v1_|dor_v1_ + 64 hex
//	shopify-token          Shopify access tokens                           shpat_|shpca_|shppa_|shpss_ + 32 hex
//	age-secret-key         age (sops) identity                             AGE-SECRET-KEY-1 + 58
//	notion-token           Notion integration token                        ntn_ + 11 digits + 35 base62; secret_ + 43 base62
//	                                                                       with upper, lower and digits
//	doppler-token          Doppler personal/service/CLI/SA/SCIM/audit      dp.pt.|dp.st.[<env>.]|dp.ct.|dp.sa.|dp.scim.|
//	                       tokens                                          dp.audit. + 40-44 base62
//	atlassian-token        Atlassian (Jira, Confluence) API token          ATATT3 + 186
//	fcm-server-key         Firebase Cloud Messaging legacy server key      AAAA + 7 + ":APA91b" + 134 base64url
//	pulumi-token           Pulumi access token                             pul- + 40 hex
//	jwt                    JSON Web Token                                  eyJ….eyJ….<signature>
//	azure-key              Azure storage/Service Bus key, SAS signature    AccountKey=…, SharedAccessKey=…, sig=…
//	url-password           password in a URI's userinfo or its query       scheme://user:PASSWORD@host, ?password=PASSWORD,
//	                       (user, host, port, path and query stay), or a   jdbc:…;password=PASSWORD, scheme://TOKEN@host,
//	                       token given as the user name                    scheme://TOKEN:x-oauth-basic@host
//	dsn-password           password in a key=value connection string or    Server=…;Password=PASSWORD; Pwd={PASSWORD};
//	                       a DSN without "://"                             host=… password=PASSWORD; user:PASSWORD@tcp(…);
//	                                                                       jdbc:oracle:thin:user/PASSWORD@
//	cli-credentials        password given to curl and friends              -u user:PASSWORD, --user user:PASSWORD
//	command-password       a command's own password flag                   mysql -pPASSWORD, docker login -p PASSWORD, sshpass -p, redis-cli -a, ldapsearch -w
//	bearer-token           bearer token in a header or code string         Bearer <16+ random token chars>
//	basic-auth             HTTP Basic credentials                          Basic <base64 that decodes to user:password>
//	auth-header            other Authorization header values               Authorization: [token|Bot|…] <16+ random chars>
//	aws-secret-key         AWS secret access key: 40 base64 chars          assigned to an AWS-ish name, or within 300
//	                                                                       bytes of an access key id
//	(extra patterns)       WithExtraPatterns rules                         the caller's regular expression
//	generic-secret         a random-looking value assigned to a            see below
//	                       secret-sounding name
//	password               any literal assigned to a password name         see below
//
// Tokens found by their prefix must not touch a letter, digit or '_' on
// either side, and their random part must have some entropy, so
// documentation fillers ("ghp_xxxxxxxx…") stay. Webhook paths and Azure
// keys are anchored by their URL or key name instead. AWS's published
// example key id, AKIAIOSFODNN7EXAMPLE, is redacted like any other: the
// model loses nothing by not reading it, and an allow-list of example
// values would let through a real key that happens to share its shape.
//
// # Credentials in URIs and connection strings
//
// There the position says that a value is a password, so url-password and
// dsn-password redact it whatever it looks like ("admin", "verysecret"),
// unless it is a template or reference ("${DB_PASS}", "$PASS",
// "{{ .Values.pw }}", "<password>", "%s", "{password}"), a mask ("****",
// "xxx", "[REDACTED]") or the bare name of the field ("password", "pwd").
// Passwords may hold unescaped '#', '!', '/', ':', '?' and several '@':
// the userinfo ends at the '@' that a host and the end of the authority
// follow, so "p#ss@w0rd@db:5432/app" loses "p#ss@w0rd" and keeps the host,
// and an '@' in the path or query ("?notify=ops@example.com") is not
// taken for it. Query and parameter keys password=, pwd= and passwd= are
// redacted in URIs (JDBC included) and in form bodies; in key=value
// strings (ADO.NET, ODBC with {braced} values, libpq) only when another
// connection key (Server=, host=, User Id=…) is on the line.
//
// A URI inside a JSON string whose encoder escapes '/'
// ("postgres:\/\/app:pw@db\/app") is read the same way. A token used as
// the user name goes too when there is no password or the password is
// the fixed word a host accepts beside a token
// ("https://<token>@dev.azure.com/…", "https://<token>:x-oauth-basic@
// github.com/…"; x-oauth-basic itself stays): the user must be 20 or more
// letters and digits that look random (or an Azure DevOps token's 52
// base32 characters), so "git", "admin", "deploy" and
// "jenkins-deployer-2024" stay.
//
// HTTP Basic credentials ("Authorization: Basic <base64 of user:pass>")
// and curl's "-u user:pass" / "--user user:pass" are judged the same way:
// "admin:admin", "svc:P@ssw0rd!" and "deploy:MyPassword2024!" go, since
// people really use those; what is documentation is a template, a mask,
// the bare field word ("user:password", "<user>:<password>",
// "admin:****"), a value with a documentation word ("your", "example",
// "changeme"…) and RFC 7617's own "Aladdin:open sesame". curl needs 4
// bytes or more and no digits alone; on a docker, podman, kubectl or
// chroot line "-u user:group" is no credential.
//
// # generic-secret
//
// A value is redacted when both its name and the value itself qualify.
//
// The name (a variable, field, key, flag, XML element or env var) has a
// word secret, token, password, passwd, pwd, pass, passphrase, apikey,
// auth, credential(s), or ends with one (dbpassword, GITHUBTOKEN), or
// has api/access/private/secret/signing/encryption/master/app/client
// followed by key. Words are split at camelCase, '_', '-' and '.', and
// match whole, so author, tokenizer and maxTokens do not count. A name
// that also has a word like name, id, file, path, url, type, length, hash,
// sha256, checksum, fingerprint, public, page or cursor is about a secret
// without holding one and does not count either.
//
// The forms are name = "v", name := "v", name: v, "name": "v", NAME=v,
// name => 'v', config["name"] = "v", var name string = "v", name: str =
// "v", <name>v</name>, --name v, --name=v, PASSWORD 'v' and IDENTIFIED BY
// 'v' in SQL, \"name\":\"v\" inside a string, the literal default of
// an environment lookup (os.environ.get("X", "v")), and two forms that
// separate the value by blanks alone: Dockerfile's legacy "ENV NAME v"
// and .netrc's "machine HOST [login U] password v" (see spaced.go).
//
// The value must look random: at least 8 bytes, no blanks, two character
// classes or more (lower, upper, digit, symbol), Shannon entropy of at
// least WithEntropyThreshold bits per character (3.0 by default; less for
// values under 16 bytes, which cannot reach it), and not word-like (long
// one-class runs with English-like vowel density, as in "Summer2024").
// It must not be a placeholder or reference: empty, "changeme", "xxxx",
// "<your-token>", "${VAR}", "$VAR", "%s", "{{ .Values.x }}",
// os.Getenv("…"), process.env.X, a function call, a path, a URL, a number,
// an unquoted identifier (secret = defaultSecret, cfg.Token), a value
// that contains "password", "token", "example", "your" and the like, or
// base64 of such a value. An unquoted dotted value is a reference in
// code but a literal on a configuration line — NAME=v with no blanks
// (env and properties files, a command's prefix), a YAML key or header
// that starts its line and whose value ends it ("vault_token: v",
// "X-Vault-Token: v"), or "Name: v" as a whole string — where tokens
// with dots are written ("hvs.CAES…", Discord's "<id>.<time>.<hmac>").
//
// # password
//
// People type passwords ("Welcome1", "Summer2024!", "letmein123") that the
// value test above turns away. When the name is explicitly a password —
// its last word is password, passwd, pwd, pass, passphrase or secret, or
// ends with password, passwd or secret (DB_PASSWORD, PGPASSWORD,
// spring.datasource.password, MYSQL_PWD, dbPass, JWT_SECRET), or the name
// ends in "secret key" (SECRET_KEY) — any literal of 4 or more bytes
// without blanks goes. An unquoted value then runs to the next blank (env
// files and YAML keep ',', ';', '}' and '=' in a password) or to a
// ";key=" parameter. What stays:
//   - templates, masks and field names, as for URIs ("${DB_PASS}",
//     "<password>", "****", "password"), and "changeme", which names no
//     secret of anyone's; values with "your", "example", "placeholder",
//     "dummy", "redacted", "required" and the like;
//   - environment lookups and calls: os.Getenv("…"), process.env.X,
//     r.FormValue("password") (a call's argument names a field);
//   - keywords and type names (null, true, string, str), capitalised or
//     non-ASCII words of translation files ("Passwort", "contraseña"),
//     and Spring's "@db.password@" filtering;
//   - code: a Go ":=", a dotted, _private, camelCase (naming a password,
//     key or value, or of long words) or snake_case identifier after a
//     blank ("password = default_password"), a bare identifier followed
//     by ',' or ')' (keyword arguments, JS object fields) or by ';' after
//     a blank, and common variable names (input, value, hashed);
//   - prose: an unquoted value followed by more words ("password: must
//     be at least 8 characters"), unless it prefixes a shell command
//     (PGPASSWORD=v psql …); "PASS: tests/x.sh" test reports.
//
// In "name=value" with no blanks (shell, env and properties files) a bare
// word is a literal even when it reads as an identifier. The value of a
// command-line flag ("--password=v", "wget --http-password=v",
// "-Dapp.db.password=v") is a literal whatever follows it on the line
// ("app --password=v --port 5432"). Under other
// secret names (api_token, auth) words stay: tokens are generated, and
// a word there is more often a reference than a credential.
//
// Measured on random strings, the value test accepts about 98% of 16-byte
// and 99.5% or more of 24+ byte base62, base64 and hex secrets; 8 to 12
// byte values are ambiguous (a short random string can look like a word)
// and about 10 to 25% of them are let through.
//
// # Cost
//
// One pass over the text looks up each pair of adjacent bytes in a bitset
// of the rules' literals ("ghp_", "AKIA", "://", "earer"…); only the rules
// whose literal occurs run their regular expression or scanner. The
// generic rule stops only at separators and rejects most names after a
// few bytes. Every forward scan is bounded, so time is linear in the
// input. On a 2,000-line Go file (56 KB) Redact takes about 0.2 ms
// without secrets (no allocation) and 0.9 ms with six (it re-scans its
// output once to guarantee the fixed point).
//
// # What is not covered
//
// Secrets with no recognisable shape and no telling name (a password
// passed positionally, connect("db", "admin", "hunter2")), passphrases
// with blanks, a human word under a token or key name (api_token:
// "sunshine"), a password given with no separator outside a .netrc entry
// or a Dockerfile ENV ("password hunter2" in prose), a capitalised word
// with no digit under a password name ("Dragon", read as a label), a
// dotted token unquoted where code could stand ("token = hvs.CAES…" with
// blanks around '=', as in INI files: read as a reference like
// cfg.Token), a token used as a URI's user name that is shorter than 20
// bytes or reads as a name, curl passwords under 4 bytes, "-u user:pass"
// on a docker or kubectl line, and files that are wholly secret but not
// listed in the ignore patterns. Redaction is a safety net under the ignore list, not a
// replacement for keeping credentials out of the repository.
package redact
