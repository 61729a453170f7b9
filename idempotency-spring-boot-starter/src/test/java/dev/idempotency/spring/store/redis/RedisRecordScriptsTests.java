/*
 * Copyright 2026-present the original author or authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *      https://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

package dev.idempotency.spring.store.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

import org.springframework.data.redis.core.script.RedisScript;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Tests for {@link RedisRecordScripts}.
 *
 * @author Idempotency contributors
 */
class RedisRecordScriptsTests {

	private static final Map<String, RedisScript<?>> SCRIPTS = Map.of("acquire", RedisRecordScripts.ACQUIRE, "complete",
			RedisRecordScripts.COMPLETE, "release", RedisRecordScripts.RELEASE, "extend", RedisRecordScripts.EXTEND,
			"find", RedisRecordScripts.FIND);

	@Test
	void everyScriptIsThePreludeFollowedByItsFile() {
		String prelude = RedisRecordScripts.read(RedisRecordScripts.PRELUDE);
		SCRIPTS.forEach((name, script) -> assertThat(script.getScriptAsString())
			.isEqualTo(RedisRecordScripts.withLayout(prelude + RedisRecordScripts.read(name), name)));
		assertThat(RedisRecordScripts.all()).containsExactlyInAnyOrderElementsOf(SCRIPTS.values());
	}

	@Test
	void digestIsTheSha1OfTheTextSentWithEval() {
		SCRIPTS.values()
			.forEach((script) -> assertThat(script.getSha1())
				.isEqualTo(sha1Hex(script.getScriptAsString().getBytes(StandardCharsets.UTF_8))));
		assertThat(SCRIPTS.values().stream().map(RedisScript::getSha1).collect(Collectors.toSet())).hasSize(5);
	}

	@Test
	void replyTypesChooseHowRedisRepliesAreRead() {
		assertThat(RedisRecordScripts.ACQUIRE.getResultType()).isEqualTo(List.class);
		assertThat(RedisRecordScripts.FIND.getResultType()).isEqualTo(List.class);
		assertThat(RedisRecordScripts.COMPLETE.getResultType()).isEqualTo(Long.class);
		assertThat(RedisRecordScripts.RELEASE.getResultType()).isEqualTo(Long.class);
		assertThat(RedisRecordScripts.EXTEND.getResultType()).isEqualTo(Long.class);
	}

	@Test
	void noScriptHoldsAPositionOfItsOwn() {
		List<String> names = new ArrayList<>(SCRIPTS.keySet());
		names.add(RedisRecordScripts.PRELUDE);
		for (String name : names) {
			String code = withoutComments(RedisRecordScripts.read(name));
			// positions, lengths and states come from the layout's placeholders
			assertThat(code).as(name)
				.doesNotContain("'P'", "'C'")
				.doesNotContainPattern("string\\.sub\\([^,]+,\\s*\\d")
				.doesNotContainPattern("string\\.sub\\([^,]+,[^,]+,\\s*\\d")
				.doesNotContainPattern("#\\w+\\s*[<>=~]+\\s*[1-9]")
				.doesNotContainPattern("SETRANGE', key, \\d");
		}
	}

	@Test
	void missingScriptIsAnErrorThatNamesIt() {
		assertThatIllegalStateException().isThrownBy(() -> RedisRecordScripts.load("absent", Long.class))
			.withMessageContaining("absent.lua");
	}

	private static String withoutComments(String lua) {
		return lua.lines().map((line) -> {
			int comment = line.indexOf("--");
			return (comment >= 0) ? line.substring(0, comment) : line;
		}).collect(Collectors.joining("\n"));
	}

	private static String sha1Hex(byte[] bytes) {
		try {
			return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-1").digest(bytes));
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

}
