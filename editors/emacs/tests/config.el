;;; config.el --- the snippet's settings reach kodyls  -*- lexical-binding: t -*-

;; main.go has a committed line that breaks the Kody Rule, and the server
;; starts with rules.scope "file" (KODYLS_SETTINGS), which flags it.  The
;; snippet's eglot-workspace-configuration answers workspace/configuration
;; with rules.scope "changed": only lines changed since HEAD are checked,
;; so only a newly typed line is flagged.  With KODYLS_EMACS_CONFIG=none
;; the script drops the snippet's settings, and the committed line is
;; flagged too: the difference is the snippet's doing.

;;; Code:

(load (expand-file-name "harness.el" (file-name-directory load-file-name)) nil t)

(kodyls-test-init)
(when (equal (getenv "KODYLS_EMACS_CONFIG") "none")
  (setq-default eglot-workspace-configuration nil))
(kodyls-test-run
 (lambda ()
   (kodyls-test-open)
   ;; Below the committed violation on line 6, type another on line 7.
   (goto-char (point-min))
   (forward-line 5)
   (kodyls-test-keys '("C-e RET") "fmt.Println(\"typed\")")
   (let ((want (if (default-value 'eglot-workspace-configuration) '(7) '(6 7))))
     (kodyls-test-step (format "kody diagnostics on lines %S" want)
                       (kodyls-test-wait (lambda () (equal (kodyls-test-diagnostic-lines) want)))
                       (kodyls-test-diagnostics)))
   (kodyls-test-put :lines (vconcat (kodyls-test-diagnostic-lines)))
   (let ((events (kodyls-test-events)))
     (kodyls-test-step "kodyls asked workspace/configuration for section kodyls"
                       (string-match-p
                        ":method \"workspace/configuration\" :params[^[]*\\[(:section \"kodyls\")\\]"
                        events)
                       events))))
;;; config.el ends here
