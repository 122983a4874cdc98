-- Headless test of doc/kodyls.txt: :helptags runs clean on a copy of the
-- doc directory, and every |link| of the file opens a help page in this
-- Neovim (a tag only newer Neovims have gives E149). Results go to
-- $KODYLS_OUT as JSON.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/harness.lua')

-- A copy, so that the tags file is not written into the repository.
local dir = vim.fn.tempname()
vim.fn.mkdir(dir .. '/doc', 'p')
local lines = vim.fn.readfile(H.plugin .. '/doc/kodyls.txt')
vim.fn.writefile(lines, dir .. '/doc/kodyls.txt')
local ok, err = pcall(vim.cmd, 'helptags ' .. vim.fn.fnameescape(dir .. '/doc'))
H.step(':helptags runs clean', ok, tostring(err) .. '\n' .. H.messages())
vim.opt.rtp:prepend(dir)

local links, seen = {}, {}
for _, line in ipairs(lines) do
  for tag in line:gmatch('|([^|%s]+)|') do
    if not seen[tag] then
      seen[tag] = true
      table.insert(links, tag)
    end
  end
end
H.step('the doc has links', #links > 0, '')
local broken = {}
for _, tag in ipairs(links) do
  local found = pcall(vim.cmd, 'help ' .. tag)
  if not found then table.insert(broken, tag) end
  vim.cmd('silent! helpclose')
end
H.result.links = links
H.step('every link opens a help page', #broken == 0, table.concat(broken, ' '))
H.result.ok = true
H.finish()
