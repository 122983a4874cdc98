package redact

import "testing"

// TestSpacedPasswords: .netrc entries and Dockerfile's legacy ENV form
// give a password after a blank, with no '=' or ':'.
func TestSpacedPasswords(t *testing.T) {
	const p = "[REDACTED:password]"
	w1, w2 := "hun"+"ter22", "Summer"+"2024!"
	runCases(t, Default(), []redactCase{
		{"netrc one line", "machine api.example.com login deploy password " + w1, "machine api.example.com login deploy password " + p},
		{"netrc entry over lines", "machine git.example.com\n  login deploy\n  password " + w2 + "\n", "machine git.example.com\n  login deploy\n  password " + p + "\n"},
		{"netrc quoted with a blank", "machine api.example.com login deploy password 'hunter 22'", "machine api.example.com login deploy password '" + p + "'"},
		{"netrc in a heredoc", "cat > ~/.netrc <<EOF\nmachine ci.example.com login bot password " + w1 + "\nEOF", "cat > ~/.netrc <<EOF\nmachine ci.example.com login bot password " + p + "\nEOF"},
		{"dockerfile env", "ENV DB_PASSWORD " + w1, "ENV DB_PASSWORD " + p},
		{"dockerfile env quoted", `ENV POSTGRES_PASSWORD "` + w2 + `"`, `ENV POSTGRES_PASSWORD "` + p + `"`},
		{"dockerfile env token", "ENV API_TOKEN " + "q8Zr2LwX7vKp" + "N4sT9mB3yH6d", "ENV API_TOKEN [REDACTED:generic-secret]"},

		// Not passwords.
		{"prose about a machine", "Reset the machine password in the admin panel.", ""},
		{"go struct fields", "type Host struct {\n\tmachine  string\n\tlogin    string\n\tpassword sql.NullString\n}", ""},
		{"sql columns", "CREATE TABLE hosts (\n  machine varchar(64),\n  login varchar(64),\n  password varchar(255),\n);", ""},
		{"fields without a login", "machine string\npassword hunter99", ""},
		{"netrc template", "machine ${HOST} login ${USER} password ${PASS}", ""},
		{"dockerfile env reference", "ENV DB_PASSWORD $DB_PASSWORD_FROM_BUILD", ""},
		{"dockerfile env length", "ENV PASSWORD_MIN_LENGTH 12", ""},
		{"dockerfile env path", "ENV HOME /home/app", ""},
		{"dockerfile modern form", "ENV APP_ENV=production LOG_LEVEL=info", ""},
		{"dockerfile env file", "ENV DB_PASSWORD_FILE /run/secrets/db_password", ""},
	})
}
