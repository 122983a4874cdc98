;;; review.el --- the AI review's quick fix through eglot  -*- lexical-binding: t -*-

;; Make the loop of main.go off by one, save with C-x C-s, wait for the
;; review's finding (the model is the fake endpoint the Go test scripts),
;; pick "Apply Kody fix" in M-x eglot-code-actions and check the buffer.

;;; Code:

(load (expand-file-name "harness.el" (file-name-directory load-file-name)) nil t)

(defun kodyls-test-line (n)
  "The text of line N of the current buffer."
  (save-excursion
    (goto-char (point-min))
    (forward-line (1- n))
    (buffer-substring-no-properties (line-beginning-position) (line-end-position))))

(defun kodyls-test-has-code (line code)
  (seq-some (lambda (d) (and (= (plist-get d :line) line) (equal (plist-get d :code) code)))
            (kodyls-test-diagnostics)))

(kodyls-test-init)
(kodyls-test-run
 (lambda ()
   (kodyls-test-open)
   ;; Line 7 holds the loop: `i < len(items)' becomes `i <= len(items)'.
   (goto-char (point-min))
   (forward-line 6)
   (search-forward "i <")
   (kodyls-test-keys "=" '("C-x C-s"))
   (kodyls-test-step "saved" (and (not (buffer-modified-p))
                                  (equal (kodyls-test-line 7) "\tfor i := 0; i <= len(items); i++ {"))
                     (kodyls-test-line 7))
   (kodyls-test-step "review diagnostic after save"
                     (kodyls-test-wait (lambda () (kodyls-test-has-code 7 "bug")) 20)
                     (kodyls-test-diagnostics))

   (goto-char (point-min))
   (forward-line 6)
   (back-to-indentation)
   (let ((titles (mapcar (lambda (a) (plist-get a :title))
                         (eglot-code-actions (point) (1+ (point))))))
     (kodyls-test-put :actions (vconcat titles))
     (kodyls-test-step "quick fix offered"
                       (seq-some (lambda (s) (string-prefix-p "Apply Kody fix: " s)) titles)
                       titles))
   (kodyls-test-keys '("M-x") "eglot-code-actions" '("RET") "Apply Kody fix" '("RET"))
   (kodyls-test-put :fixed_line (kodyls-test-line 7))
   (kodyls-test-step "buffer fixed" (equal (kodyls-test-line 7) "\tfor _, it := range items {")
                     (buffer-string))
   (kodyls-test-step "finding cleared after the fix"
                     (kodyls-test-wait (lambda () (not (kodyls-test-has-code 7 "bug"))))
                     (kodyls-test-diagnostics))))
;;; review.el ends here
