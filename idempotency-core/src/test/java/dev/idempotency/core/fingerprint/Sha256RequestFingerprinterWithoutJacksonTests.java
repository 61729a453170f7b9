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

package dev.idempotency.core.fingerprint;

import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Tests for {@link Sha256RequestFingerprinter} when Jackson is not on the class path. The
 * core classes are loaded again by a class loader that sees only them and the JDK.
 *
 * @author Idempotency contributors
 */
class Sha256RequestFingerprinterWithoutJacksonTests {

	private static final String JSON = "application/json";

	@Test
	void fingerprintsJsonBodiesAsRawBytes() throws Exception {
		URL classes = Sha256RequestFingerprinter.class.getProtectionDomain().getCodeSource().getLocation();
		try (IsolatedClassLoader loader = new IsolatedClassLoader(classes)) {
			assertThatExceptionOfType(ClassNotFoundException.class)
				.isThrownBy(() -> loader.loadClass("tools.jackson.core.json.JsonFactory"));
			Class<?> fingerprinterClass = loader.loadClass(Sha256RequestFingerprinter.class.getName());
			assertThat(fingerprinterClass.getClassLoader()).isSameAs(loader);
			assertThat(fingerprinterClass.getMethod("isJsonCanonicalizationAvailable").invoke(null)).isEqualTo(false);
			Object fingerprinter = fingerprinterClass.getConstructor().newInstance();
			fingerprinterClass.getMethod("setExcludedJsonPointers", List.class).invoke(fingerprinter, List.of("/a"));
			String ordered = isolatedFingerprint(loader, fingerprinter, "{\"a\":1,\"b\":2}");
			String reordered = isolatedFingerprint(loader, fingerprinter, "{\"b\":2,\"a\":1}");
			assertThat(ordered).isNotEqualTo(reordered);
			Sha256RequestFingerprinter raw = new Sha256RequestFingerprinter();
			raw.setCanonicalizeJson(false);
			assertThat(ordered).isEqualTo(raw.fingerprint(input("{\"a\":1,\"b\":2}")).toHex());
			assertThat(reordered).isEqualTo(raw.fingerprint(input("{\"b\":2,\"a\":1}")).toHex());
			assertThat(loader.isLoaded(JsonCanonicalizer.class.getName())).isFalse();
		}
	}

	private static String isolatedFingerprint(ClassLoader loader, Object fingerprinter, String body) throws Exception {
		Class<?> inputClass = loader.loadClass(FingerprintInput.class.getName());
		Method of = inputClass.getMethod("of", String.class, String.class, String.class, String.class, List.class,
				byte[].class, int.class, int.class);
		byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
		Object input = of.invoke(null, "POST", "/payments", null, JSON, List.of(), bytes, 0, bytes.length);
		Object fingerprint = fingerprinter.getClass().getMethod("fingerprint", inputClass).invoke(fingerprinter, input);
		return (String) fingerprint.getClass().getMethod("toHex").invoke(fingerprint);
	}

	private static FingerprintInput input(String body) {
		byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
		return FingerprintInput.of("POST", "/payments", null, JSON, List.of(), bytes, 0, bytes.length);
	}

	/**
	 * Loads the core classes from their output directory, with only the JDK as parent.
	 */
	static class IsolatedClassLoader extends URLClassLoader {

		IsolatedClassLoader(URL classes) {
			super(new URL[] { classes }, ClassLoader.getPlatformClassLoader());
		}

		boolean isLoaded(String name) {
			return findLoadedClass(name) != null;
		}

	}

}
