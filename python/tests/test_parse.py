"""Fence parsing of model answers (pure)."""

import unittest

from haven.codeblocks import _plan, _session_commands, parse_code_blocks


class TestParse(unittest.TestCase):
    def test_backticks_and_tildes_in_order(self):
        text = "Intro\n```python\nprint(1)\n```\ntext\n~~~bash\necho hi\n~~~\n"
        blocks = parse_code_blocks(text)
        self.assertEqual([(b.language, b.code) for b in blocks], [("python", "print(1)\n"), ("bash", "echo hi\n")])
        self.assertEqual([b.index for b in blocks], [0, 1])
        self.assertEqual([b.line for b in blocks], [2, 6])

    def test_info_strings(self):
        for info, lang in [
            ("py", "py"),
            ("Python3", "python3"),
            ("python title=\"x.py\"", "python"),
            ("{python}", "python"),
            ("{.python .numberLines}", "python"),
            ("js,ignore", "js"),
            ("", ""),
            ("  sh  ", "sh"),
        ]:
            blocks = parse_code_blocks("```%s\nx\n```\n" % info)
            self.assertEqual(blocks[0].language, lang, info)

    def test_indented_fence_in_a_list_item(self):
        text = "1. Run:\n\n    ```bash\n    echo one\n      echo two\n    ```\n2. Done\n"
        (b,) = parse_code_blocks(text)
        self.assertEqual(b.code, "echo one\n  echo two\n")
        self.assertTrue(b.terminated)

    def test_close_needs_same_char_and_length(self):
        text = "````markdown\n```python\nprint(1)\n```\n````\n~~~\na\n```\n~~~~\n"
        blocks = parse_code_blocks(text)
        self.assertEqual(len(blocks), 2)
        self.assertEqual(blocks[0].code, "```python\nprint(1)\n```\n")
        self.assertEqual(blocks[1].code, "a\n```\n")

    def test_closing_fence_with_text_is_content(self):
        (b,) = parse_code_blocks("```sh\necho a\n``` not a close\n```\n")
        self.assertEqual(b.code, "echo a\n``` not a close\n")

    def test_unterminated_block_at_the_end(self):
        blocks = parse_code_blocks("```python\nprint(1)\n```\nand\n```python\nprint(2)\n")
        self.assertEqual(len(blocks), 2)
        self.assertTrue(blocks[0].terminated)
        self.assertFalse(blocks[1].terminated)
        self.assertEqual(blocks[1].code, "print(2)\n")

    def test_inline_triple_backticks_are_not_a_fence(self):
        self.assertEqual(parse_code_blocks("use ```x``` here\n```x```\n"), [])

    def test_crlf(self):
        (b,) = parse_code_blocks("```py\r\nprint(1)\r\n```\r\n")
        self.assertEqual((b.language, b.code), ("py", "print(1)\n"))

    def test_empty_block(self):
        (b,) = parse_code_blocks("```python\n```\n")
        self.assertEqual(b.code, "")
        self.assertEqual(_plan(b, None)[2], "the block is empty")

    def test_console_prompts(self):
        code = "$ echo a \\\n  b\na b\n$ ls\nfile\n"
        self.assertEqual(_session_commands(code), "echo a \\\n  b\nls\n")
        (b,) = parse_code_blocks("```console\n" + code + "```\n")
        self.assertEqual(_plan(b, None)[:2], ("bash", "echo a \\\n  b\nls\n"))

    def test_prompted_bash_block(self):
        (b,) = parse_code_blocks("```bash\n$ echo hi\n$ echo there\n```\n")
        self.assertEqual(_plan(b, None)[:2], ("bash", "echo hi\necho there\n"))
        # A plain bash block keeps a "$" that is not a prompt.
        (b,) = parse_code_blocks("```bash\necho $HOME\n$ echo x\n```\n")
        self.assertEqual(_plan(b, None)[1], "echo $HOME\n$ echo x\n")

    def test_plans(self):
        blocks = parse_code_blocks("```\nx\n```\n```text\nx\n```\n```js\n1\n```\n```shell\nls\n```\n")
        plans = [_plan(b, None) for b in blocks]
        self.assertEqual(plans[0][0], None)
        self.assertIn("no language", plans[0][2])
        self.assertEqual(plans[1][0], None)
        self.assertIn("'text' is not a language", plans[1][2])
        self.assertEqual(plans[2][0], "node")
        self.assertEqual(plans[3][0], "bash")
        self.assertIn("not run here", _plan(blocks[2], {"python"})[2])


if __name__ == "__main__":
    unittest.main()
