;;; harness.el --- shared by the Emacs tests cmd/kodyls runs  -*- lexical-binding: t -*-

;; The Go tests in cmd/kodyls (emacs_test.go) run a real Emacs (-nw under
;; a pseudo-terminal, so the command loop runs eglot's and flymake's idle
;; timers as it does for a user) with one script of this directory.  The
;; script loads this file, which: makes Debian's ELPA packages (eglot,
;; go-mode) available as package-initialize does in an init file, loads
;; the README's Emacs snippet ($KODYLS_SNIPPET) as a user's init file
;; would, records named steps and writes them as JSON to $KODYLS_OUT.
;; Input goes through `execute-kbd-macro', so every edit, command and
;; minibuffer answer is a key sequence run by the command loop, with its
;; hooks, as if typed.

;;; Code:

(require 'package)
(require 'subr-x)

(defvar kodyls-test-out (getenv "KODYLS_OUT"))
(defvar kodyls-test-file (getenv "KODYLS_FILE"))
(defvar kodyls-test-root (getenv "KODYLS_ROOT"))
(defvar kodyls-test-steps nil "Steps so far, newest first.")
(defvar kodyls-test-data nil "Other results: a plist with keyword keys.")

(defun kodyls-test-put (key value)
  "Record VALUE under KEY (a keyword) in the JSON result."
  (setq kodyls-test-data (plist-put kodyls-test-data key value)))

(defun kodyls-test-finish (ok)
  "Write the result, with OK as its \"ok\", and leave Emacs."
  (with-temp-file kodyls-test-out
    (insert (json-serialize
             (append (list :ok (if ok t :false)
                           :steps (vconcat (reverse kodyls-test-steps)))
                     kodyls-test-data))))
  (kill-emacs 0))

(defun kodyls-test-step (name ok &optional detail)
  "Record step NAME; the first one that is not OK ends the run."
  (push (list :name name :ok (if ok t :false)
              :detail (if (stringp detail) detail (format "%S" detail)))
        kodyls-test-steps)
  (unless ok (kodyls-test-finish nil))
  ok)

(defun kodyls-test-wait (pred &optional timeout)
  "Run the command loop until PRED returns non-nil or TIMEOUT seconds pass.
Returns PRED's value.  The command loop (a recursive edit with no input)
is idle, so idle timers run: eglot sends buffered changes on one,
flymake starts its backends on another."
  (let* ((deadline (+ (float-time) (or timeout 10)))
         (value nil)
         (timer (run-with-timer
                 0 0.005
                 (lambda ()
                   (when (or (setq value (ignore-errors (funcall pred)))
                             (> (float-time) deadline))
                     (exit-recursive-edit))))))
    (unwind-protect (recursive-edit)
      (cancel-timer timer))
    value))

(defun kodyls-test-keys (&rest parts)
  "Type PARTS as one keyboard macro.
A string is typed literally, one key per character; a list (KEYS) holds
keys in `kbd' notation.  A command that reads the minibuffer must get its
answer in the same call: input left unread when a macro ends is waited
for on the terminal."
  (execute-kbd-macro
   (apply #'vconcat (mapcar (lambda (p) (if (consp p) (kbd (car p)) p)) parts))))

(defun kodyls-test-init ()
  "What an init file does: packages, then the README's snippet."
  ;; -Q skips site-start and package activation; Debian's elpa-* packages
  ;; live here.
  (setq package-directory-list '("/usr/share/emacs/site-lisp/elpa"))
  (package-initialize)
  ;; eglot 1.9 asks kodyls for document symbols for imenu, which kodyls
  ;; does not offer, and waits for the answer synchronously; a request
  ;; kodyls sends meanwhile (workspace/configuration) is lost when keys
  ;; arrive during that wait.  kodyls then goes on after a bounded wait
  ;; without the snippet's settings, which the tests check.  The snippet
  ;; keeps eglot out of imenu, once eglot is loaded; nothing here does, so
  ;; that the tests run the README's form as a user's init file would
  ;; (editors/emacs/README.md), and `kodyls-test-open' checks it took.
  (let ((err (condition-case err
                 (progn (load (getenv "KODYLS_SNIPPET") nil t) nil)
               (error err))))
    (kodyls-test-step "the README's snippet loads in an init file" (null err)
                      (format "%S" err))))

(defun kodyls-test-diagnostics ()
  "Flymake's diagnostics in the current buffer: line, type, text, LSP code."
  (mapcar (lambda (d)
            (let ((lsp (cdr (assoc 'eglot-lsp-diag (flymake-diagnostic-data d)))))
              (list :line (line-number-at-pos (flymake-diagnostic-beg d))
                    :type (format "%s" (flymake-diagnostic-type d))
                    :text (flymake-diagnostic-text d)
                    :source (or (plist-get lsp :source) "")
                    :code (format "%s" (or (plist-get lsp :code) "")))))
          (sort (flymake-diagnostics)
                (lambda (a b) (< (flymake-diagnostic-beg a) (flymake-diagnostic-beg b))))))

(defun kodyls-test-diagnostic-lines (&optional source)
  "Lines with a flymake diagnostic from SOURCE (default \"kody\")."
  (delq nil (mapcar (lambda (d)
                      (when (equal (plist-get d :source) (or source "kody"))
                        (plist-get d :line)))
                    (kodyls-test-diagnostics))))

(defun kodyls-test-events ()
  "The eglot events buffer of the current server (the JSON-RPC log)."
  (if-let ((server (and (fboundp 'eglot-current-server) (eglot-current-server)))
           (buf (jsonrpc-events-buffer server)))
      (with-current-buffer buf (buffer-string))
    ""))

(defvar-local kodyls-test-last-change 0
  "When the buffer last changed (`float-time').")

(defun kodyls-test-note-change (&rest _)
  (setq kodyls-test-last-change (float-time)))

(defun kodyls-test-type-on-terminal (keys)
  "Have KEYS (a string of terminal input) typed on Emacs's terminal.
The Go test reads the request from the screen and writes KEYS to the
terminal: real input, so Emacs stops being idle at each key and eglot's
idle timer counts from the last one, as when a person types."
  (send-string-to-terminal
   (concat "\e]5379;" (base64-encode-string (encode-coding-string keys 'utf-8) t) "\a")))

(defun kodyls-test-open ()
  "Open $KODYLS_FILE with C-x C-f, as typed, and wait for eglot."
  (kodyls-test-keys '("C-x C-f C-a C-k") kodyls-test-file '("RET"))
  (add-hook 'after-change-functions #'kodyls-test-note-change nil t)
  (kodyls-test-step "file opened in go-mode"
                    (and (equal buffer-file-name kodyls-test-file) (eq major-mode 'go-mode))
                    (format "%s %s" buffer-file-name major-mode))
  (let ((server (kodyls-test-wait
                 (lambda () (and eglot--managed-mode (eglot-current-server))))))
    (kodyls-test-step "eglot connected" server (kodyls-test-messages))
    (kodyls-test-step "the README's snippet keeps eglot out of imenu"
                      (and (eglot--stay-out-of-p 'imenu)
                           (not (advice-function-member-p #'eglot-imenu imenu-create-index-function)))
                      (format "eglot-stay-out-of %S, imenu-create-index-function %S"
                              eglot-stay-out-of imenu-create-index-function))
    (let* ((proc (jsonrpc--process server))
           (exe (file-truename (format "/proc/%d/exe" (process-id proc)))))
      (kodyls-test-step "the server is `kodyls serve', kodyls found on PATH"
                        (and (equal (process-command proc) '("kodyls" "serve"))
                             (equal exe (file-truename (executable-find "kodyls"))))
                        (format "%S runs %s" (process-command proc) exe)))
    server))

(defun kodyls-test-messages ()
  "The *Messages* buffer: what the echo area showed."
  (with-current-buffer (messages-buffer) (buffer-string)))

(defun kodyls-test-run (main)
  "Run MAIN from the command loop; an error ends the run as a failed step.
A run still going after 90 seconds (a key sequence waiting for input that
never comes) ends as a failed step too."
  (run-with-timer
   90 nil
   (lambda ()
     (kodyls-test-step "finished in time" nil
                       (format "buffer %s, minibuffer %S\n%s"
                               (current-buffer) (minibufferp)
                               (kodyls-test-messages)))))
  (run-with-timer
   0 nil
   (lambda ()
     (condition-case err
         (progn (funcall main) (kodyls-test-finish t))
       (error (kodyls-test-step "no Lisp error" nil
                                (format "%S\n%s" err (kodyls-test-events))))))))

(provide 'harness)
;;; harness.el ends here
