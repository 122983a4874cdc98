package redact

import "testing"

// TestPasswordNames pins the password rule: under a name that is
// explicitly a password, a literal goes whatever its shape (human
// passwords are words and digits), and what is not a literal stays.
func TestPasswordNames(t *testing.T) {
	const p = "[REDACTED:password]"
	// Passwords are concatenated so that no line here reads as a committed
	// credential.
	w1, w2, w3, w4 := "Wel"+"come1", "Summer"+"2024!", "hun"+"ter22", "letme"+"in123"
	runCases(t, Default(), []redactCase{
		{"spring properties", "spring.datasource.password=" + w1, "spring.datasource.password=" + p},
		{"env file", "DB_PASSWORD=" + w2, "DB_PASSWORD=" + p},
		{"yaml quoted", `password: "` + w3 + `"`, `password: "` + p + `"`},
		{"yaml bare", "  password: " + w3, "  password: " + p},
		{"yaml bare with comment", "password: " + w3 + " # prod", "password: " + p + " # prod"},
		{"shell export", "export PGPASSWORD=" + w4, "export PGPASSWORD=" + p},
		{"shell prefix of a command", "PGPASSWORD=" + w4 + " psql -h db -U app", "PGPASSWORD=" + p + " psql -h db -U app"},
		{"mysql env", "MYSQL_PWD=" + w3, "MYSQL_PWD=" + p},
		{"compose list", "  - POSTGRES_PASSWORD=" + w1, "  - POSTGRES_PASSWORD=" + p},
		{"secret word", "JWT_SECRET=" + "mysuper" + "secret", "JWT_SECRET=" + p},
		{"camel pass", `dbPass = "` + w1 + `";`, `dbPass = "` + p + `";`},
		{"json", `{"user": "app", "password": "` + w2 + `"}`, `{"user": "app", "password": "` + p + `"}`},
		{"go string", `cfg.Password = "` + w3 + `"`, `cfg.Password = "` + p + `"`},
		{"python", `PASSWORD = '` + w1 + `'`, `PASSWORD = '` + p + `'`},
		{"php array", `'password' => '` + w3 + `',`, `'password' => '` + p + `',`},
		{"ini with blanks", "password = " + w3, "password = " + p},
		{"xml", "<password>" + w3 + "</password>", "<password>" + p + "</password>"},
		{"flag", "mysqladmin --password " + w3 + " status", "mysqladmin --password " + p + " status"},
		{"flag= before another flag", "app --password=" + w3 + " --port 5432", "app --password=" + p + " --port 5432"},
		{"flag= before an argument", "app --password=" + w3 + " https://x", "app --password=" + p + " https://x"},
		{"wget flag=", "wget --user=ci --password=" + "P@ss" + "w0rd! https://x", "wget --user=ci --password=" + p + " https://x"},
		{"java system property", "java -Dapp.db.password=" + w3 + " -jar app.jar", "java -Dapp.db.password=" + p + " -jar app.jar"},
		{"sql", "CREATE USER app WITH PASSWORD '" + w3 + "';", "CREATE USER app WITH PASSWORD '" + p + "';"},
		{"digits only", "DB_PASSWORD=" + "8675" + "309", "DB_PASSWORD=" + p},
		{"breached word", "DB_PASSWORD=" + "ad" + "min", "DB_PASSWORD=" + p},
		{"base64 in a k8s secret", "  password: " + "aHVudGVy" + "MjI=", "  password: [REDACTED:generic-secret]"},
		{"env default", `password = os.environ.get("DB_PASSWORD", "` + w3 + `")`, `password = os.environ.get("DB_PASSWORD", "` + p + `")`},

		// Not literals: references, templates, masks, keywords, code.
		{"form value", `password := r.FormValue("password")`, ""},
		{"form value of another field", `password := r.PostFormValue("user_pass")`, ""},
		{"comparison", `if password == "" {`, ""},
		{"field name", `passwordField := "pw-input"`, ""},
		{"hash call", `h := PasswordHash(pw)`, ""},
		{"log message", `log.Printf("password: must be at least 8 characters")`, ""},
		{"error message", `return errors.New("invalid password: too short")`, ""},
		{"prose", "password=hunter is documented in the admin guide", ""},
		{"dotted", `password = cfg.Password`, ""},
		{"camel variable", `password = defaultPassword`, ""},
		{"snake variable", `password = default_password`, ""},
		{"constant", `PASSWORD = DEFAULT_PASSWORD`, ""},
		{"go short decl", `password := hashed`, ""},
		{"js object field", `{ password: hashedPassword, email }`, ""},
		{"js object field short", `{ password: input, email }`, ""},
		{"c assignment", `password = buffer;`, ""},
		{"template", `password = ${DB_PASSWORD}`, ""},
		{"angle placeholder", `password: <password>`, ""},
		{"changeme", `password: changeme`, ""},
		{"getenv", `password = os.Getenv("DB_PASSWORD")`, ""},
		{"process env", `const password = process.env.DB_PASSWORD`, ""},
		{"empty", `password = ""`, ""},
		{"mask", `password: "***"`, ""},
		{"field word", `password: password`, ""},
		{"type", `password: str`, ""},
		{"type with default", `password: Optional[str] = None`, ""},
		{"rust type", `password: String,`, ""},
		{"ts type", `password: string;`, ""},
		{"null", `password: null`, ""},
		{"boolean", `require_password: true`, ""},
		{"yaml alias", `password: *default_pw`, ""},
		{"spring filtering", `spring.datasource.password=@db.password@`, ""},
		{"translation", `"password": "Passwort",`, ""},
		{"translation non-ascii", `"password": "contraseña",`, ""},
		{"validation rules", `'password' => 'required|min:8|confirmed',`, ""},
		{"helm existing secret", `existingSecret: db-creds`, ""},
		{"test report", `PASS: tests/basic.sh`, ""},
		{"short", `pass = "ok"`, ""},
		{"hint", `password_hint = "first pet"`, ""},
		{"confirmation is no password key", `password_confirmation = params`, ""},
		{"your placeholder", `DB_PASSWORD=your_db_password_here`, ""},
		{"flag= template", `app --password=$DB_PASSWORD --port 5432`, ""},
		{"flag= field word", `app --password=PASSWORD --port 5432`, ""},
		{"flag= placeholder", `app --password=<password> --port 5432`, ""},
	})
}
